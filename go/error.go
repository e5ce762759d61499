package kiln

/*
#include <kiln/kiln.h>
*/
import "C"

import "fmt"

// Code is a KilnStatusCode (absl::StatusCode numbering).
type Code int

// The status codes (kiln/status.h).
const (
	InvalidArgument    Code = 3
	NotFound           Code = 5
	ResourceExhausted  Code = 8
	FailedPrecondition Code = 9
	OutOfRange         Code = 11
	Unimplemented      Code = 12
	Internal           Code = 13
	DataLoss           Code = 15
)

// String is the code's name: "INVALID_ARGUMENT", ...
func (c Code) String() string {
	return C.GoString(C.kiln_status_code_name(C.KilnStatusCode(c)))
}

// Error is a failed kiln call: what kind of failure, and the library's
// message (what was wrong and where).
type Error struct {
	Code    Code
	Message string
}

func (e *Error) Error() string { return fmt.Sprintf("%v: %s", e.Code, e.Message) }

// errorf is an Error the package reports itself, with the code the C API
// would have used.
func errorf(code Code, format string, args ...interface{}) error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// check turns a KilnStatus* into an error and frees it (nil for NULL).
func check(st *C.KilnStatus) error {
	if st == nil {
		return nil
	}
	e := &Error{Code: Code(C.kiln_status_code(st)), Message: C.GoString(C.kiln_status_message(st))}
	C.kiln_status_free(st)
	return e
}
