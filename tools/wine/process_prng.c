/*
 * bcryptprimitives.dll's ProcessPrng, for wine 8 (Debian bookworm's), which lacks it.
 *
 * Rust's standard library draws its HashMap seeds from ProcessPrng on Windows and aborts
 * when the function is missing. `make cross` builds this with mingw-w64 and loads it ahead
 * of wine's own bcryptprimitives.dll (WINEDLLOVERRIDES), only to run the Windows test
 * binaries under wine; nothing of it ships. Windows 10 and later have the real function.
 */
#include <windows.h>
#include <ntsecapi.h> /* RtlGenRandom (advapi32's SystemFunction036) */

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len)
{
    /* RtlGenRandom takes a ULONG length: large requests go in pieces. */
    while (len > 0) {
        ULONG piece = len > 0x40000000u ? 0x40000000u : (ULONG)len;
        if (!RtlGenRandom(data, piece))
            return FALSE;
        data += piece;
        len -= piece;
    }
    return TRUE;
}
