//! `Page`: one page of a list result (`triggers.list`, `drips.list`), its items and the
//! spec's `meta`, as a Python sequence that compares, pickles and shows itself.

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};

use super::models::html_of;

/// One page of a list: `data` and the spec's `meta` as `total`, `page`, `per_page`,
/// `last_page`.
#[pyclass(module = "pushwire._core", frozen, get_all)]
pub struct Page {
    /// The page's items, in the service's order.
    pub data: Py<PyList>,
    /// Items in the whole list (`meta.total`).
    pub total: i64,
    /// This page's number, from 1.
    pub page: i64,
    /// Items a page holds (`meta.per_page`).
    pub per_page: i64,
    /// The number of the last page (1 for an empty list).
    pub last_page: i64,
}

#[pymethods]
impl Page {
    #[new]
    #[pyo3(signature = (data, total, page, per_page, last_page))]
    fn new(data: Bound<'_, PyList>, total: i64, page: i64, per_page: i64, last_page: i64) -> Self {
        Page {
            data: data.unbind(),
            total,
            page,
            per_page,
            last_page,
        }
    }

    /// The page as an HTML table, for Jupyter (`pushwire._html`).
    fn _repr_html_(slf: &Bound<'_, Self>) -> PyResult<String> {
        html_of(slf.as_any())
    }

    /// Whether a later page exists.
    #[getter]
    fn has_next(&self) -> bool {
        self.page < self.last_page
    }

    fn __len__(&self, py: Python<'_>) -> usize {
        self.data.bind(py).len()
    }

    fn __iter__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.data.bind(py).as_any().try_iter().map(|i| i.into_any())
    }

    /// An item, or a list of them for a slice (as the list `data` would give).
    fn __getitem__<'py>(
        &self,
        py: Python<'py>,
        key: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.data.bind(py).as_any().get_item(key).map_err(|e| {
            if e.is_instance_of::<pyo3::exceptions::PyIndexError>(py) {
                pyo3::exceptions::PyIndexError::new_err("page index out of range")
            } else {
                e
            }
        })
    }

    fn __eq__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<bool> {
        let Ok(other) = other.cast::<Page>() else {
            return Ok(false);
        };
        let o = other.get();
        Ok(self.total == o.total
            && self.page == o.page
            && self.per_page == o.per_page
            && self.last_page == o.last_page
            && self.data.bind(py).eq(o.data.bind(py))?)
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!(
            "Page(page={}, per_page={}, total={}, last_page={}, data=[{} items])",
            self.page,
            self.per_page,
            self.total,
            self.last_page,
            self.data.bind(py).len()
        ))
    }

    /// A plain dict: `data` (each item as a dict), `total`, `page`, `per_page`, `last_page`.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        let items = PyList::empty(py);
        for item in self.data.bind(py).iter() {
            items.append(item.call_method0("to_dict")?)?;
        }
        d.set_item("data", items)?;
        d.set_item("total", self.total)?;
        d.set_item("page", self.page)?;
        d.set_item("per_page", self.per_page)?;
        d.set_item("last_page", self.last_page)?;
        Ok(d)
    }

    fn __reduce__<'py>(
        slf: &Bound<'py, Self>,
        py: Python<'py>,
    ) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyTuple>)> {
        let p = slf.get();
        let args = PyTuple::new(
            py,
            [
                p.data.bind(py).clone().into_any(),
                p.total.into_pyobject(py)?.into_any(),
                p.page.into_pyobject(py)?.into_any(),
                p.per_page.into_pyobject(py)?.into_any(),
                p.last_page.into_pyobject(py)?.into_any(),
            ],
        )?;
        Ok((slf.get_type().into_any(), args))
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Page>()
}
