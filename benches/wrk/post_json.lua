-- POST a fixed JSON body (the event of case 3); the key comes with -H on the command line.
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"event_name":"bench_event","profile_id":"bench-profile","data":{"n":1}}'
