//! `kiln::Error`: a failed call's status code and message.
//!
//! Every C function that can fail returns a `KilnStatus*` (docs/c_api.md
//! §2.1); the crate turns it into `Err(Error)` with the same code and message
//! and frees the status. Checks the crate makes itself (a slice whose length
//! does not match its shape, a string with a NUL byte) use the code the C API
//! would have used.

use std::ffi::{CStr, CString};
use std::fmt;
use std::os::raw::c_char;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use kiln_sys as sys;

/// `KilnStatusCode` (absl::StatusCode numbering).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Code {
    InvalidArgument,
    NotFound,
    ResourceExhausted,
    FailedPrecondition,
    OutOfRange,
    Unimplemented,
    Internal,
    DataLoss,
    /// A code this crate does not know (a newer library).
    Other(i32),
}

impl Code {
    pub fn from_raw(code: i32) -> Code {
        match code {
            sys::KILN_INVALID_ARGUMENT => Code::InvalidArgument,
            sys::KILN_NOT_FOUND => Code::NotFound,
            sys::KILN_RESOURCE_EXHAUSTED => Code::ResourceExhausted,
            sys::KILN_FAILED_PRECONDITION => Code::FailedPrecondition,
            sys::KILN_OUT_OF_RANGE => Code::OutOfRange,
            sys::KILN_UNIMPLEMENTED => Code::Unimplemented,
            sys::KILN_INTERNAL => Code::Internal,
            sys::KILN_DATA_LOSS => Code::DataLoss,
            other => Code::Other(other),
        }
    }

    /// The C value (`KILN_INVALID_ARGUMENT` is 3, ...).
    pub fn raw(self) -> i32 {
        match self {
            Code::InvalidArgument => sys::KILN_INVALID_ARGUMENT,
            Code::NotFound => sys::KILN_NOT_FOUND,
            Code::ResourceExhausted => sys::KILN_RESOURCE_EXHAUSTED,
            Code::FailedPrecondition => sys::KILN_FAILED_PRECONDITION,
            Code::OutOfRange => sys::KILN_OUT_OF_RANGE,
            Code::Unimplemented => sys::KILN_UNIMPLEMENTED,
            Code::Internal => sys::KILN_INTERNAL,
            Code::DataLoss => sys::KILN_DATA_LOSS,
            Code::Other(c) => c,
        }
    }

    /// "INVALID_ARGUMENT", ... (kiln_status_code_name's spelling).
    pub fn name(self) -> &'static str {
        match self {
            Code::InvalidArgument => "INVALID_ARGUMENT",
            Code::NotFound => "NOT_FOUND",
            Code::ResourceExhausted => "RESOURCE_EXHAUSTED",
            Code::FailedPrecondition => "FAILED_PRECONDITION",
            Code::OutOfRange => "OUT_OF_RANGE",
            Code::Unimplemented => "UNIMPLEMENTED",
            Code::Internal => "INTERNAL",
            Code::DataLoss => "DATA_LOSS",
            Code::Other(_) => "UNKNOWN",
        }
    }
}

/// A failed kiln call: what kind of failure, and the library's message
/// (what was wrong and where).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    code: Code,
    message: String,
}

pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    pub fn new(code: Code, message: impl Into<String>) -> Error {
        Error {
            code,
            message: message.into(),
        }
    }

    pub fn code(&self) -> Code {
        self.code
    }

    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code.name(), self.message)
    }
}

impl std::error::Error for Error {}

/// Ok for a NULL status; otherwise the status as an Error (and frees it).
///
/// # Safety
/// `status` is NULL or a status a kiln call just returned, not yet freed.
pub(crate) unsafe fn check(status: *mut sys::KilnStatus) -> Result<()> {
    if status.is_null() {
        return Ok(());
    }
    let code = Code::from_raw(sys::kiln_status_code(status));
    let message = borrowed_string(sys::kiln_status_message(status));
    sys::kiln_status_free(status);
    Err(Error { code, message })
}

/// A copy of a borrowed C string ("" for NULL; invalid UTF-8 replaced).
///
/// # Safety
/// `ptr` is NULL or a NUL-terminated string valid for the call.
pub(crate) unsafe fn borrowed_string(ptr: *const c_char) -> String {
    if ptr.is_null() {
        String::new()
    } else {
        CStr::from_ptr(ptr).to_string_lossy().into_owned()
    }
}

/// A malloc'ed string the library returned, copied and freed with kiln_free.
///
/// # Safety
/// `ptr` is NULL or a `char*` result of a kiln call, not yet freed.
pub(crate) unsafe fn take_string(ptr: *mut c_char) -> String {
    let s = borrowed_string(ptr);
    sys::kiln_free(ptr as *mut _);
    s
}

/// `s` as a C string; a NUL byte inside is INVALID_ARGUMENT naming `what`.
pub(crate) fn c_string(s: &str, what: &str) -> Result<CString> {
    CString::new(s).map_err(|_| {
        Error::new(
            Code::InvalidArgument,
            format!("{} {:?} contains a NUL byte", what, s),
        )
    })
}

pub(crate) fn c_path(p: &Path) -> Result<CString> {
    CString::new(p.as_os_str().as_bytes()).map_err(|_| {
        Error::new(
            Code::InvalidArgument,
            format!("path {:?} contains a NUL byte", p),
        )
    })
}
