//! One line of `toolhost doctor`'s report, shared by its local and its remote checks.

/// How one check came out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Status {
    Ok,
    Warn,
    Fail,
}

/// One line of the report.
pub(super) struct Check {
    pub(super) status: Status,
    pub(super) name: &'static str,
    pub(super) detail: String,
}
