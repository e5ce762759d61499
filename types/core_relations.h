// File: types/core_relations.h
//
// The type relations of kiln's core operators, one source file per operator
// family (rel_elemwise.cc, rel_reduce.cc, rel_conv.cc, rel_dense.cc,
// rel_pool.cc, rel_norm.cc, rel_transform.cc).
#ifndef KILN_TYPES_CORE_RELATIONS_H_
#define KILN_TYPES_CORE_RELATIONS_H_

namespace kiln::types {

// Registers the relations of every core operator. Idempotent and thread-safe;
// InferType calls it before solving.
void RegisterCoreTypeRelations();

}  // namespace kiln::types

#endif  // KILN_TYPES_CORE_RELATIONS_H_
