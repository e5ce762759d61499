// File: ir/status_macros.h
//
// KILN_RETURN_IF_ERROR(expr): returns the status of `expr` when it is not OK.
// KILN_ASSIGN_OR_RETURN(lhs, expr): evaluates a StatusOr, returns its status
// on error, otherwise assigns (or declares) `lhs` with its value.
//
//   KILN_ASSIGN_OR_RETURN(Expr call, MakeCall(op, {x, y}));
//   KILN_RETURN_IF_ERROR(module.Add(gv, fn));
#ifndef KILN_IR_STATUS_MACROS_H_
#define KILN_IR_STATUS_MACROS_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define KILN_STATUS_CONCAT_INNER_(a, b) a##b
#define KILN_STATUS_CONCAT_(a, b) KILN_STATUS_CONCAT_INNER_(a, b)

#define KILN_RETURN_IF_ERROR(expr)                    \
  do {                                                \
    ::absl::Status kiln_status_ = (expr);             \
    if (!kiln_status_.ok()) return kiln_status_;      \
  } while (0)

#define KILN_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                                \
  if (!tmp.ok()) return std::move(tmp).status();    \
  lhs = std::move(tmp).value()

#define KILN_ASSIGN_OR_RETURN(lhs, expr) \
  KILN_ASSIGN_OR_RETURN_IMPL_(KILN_STATUS_CONCAT_(kiln_statusor_, __LINE__), lhs, expr)

#endif  // KILN_IR_STATUS_MACROS_H_
