// File: ir/scope_tree.h
//
// A tree of lexical scopes with lowest-common-ancestor queries, for placing a
// shared node in the innermost scope that holds all its uses (the .kir
// printer, ToANormalForm). Skew-binary jump pointers: O(1) space per scope,
// O(log depth) per query, so a 100,000-deep let chain stays cheap.
//
//   ScopeTree t;
//   int root = t.Add(-1), a = t.Add(root), b = t.Add(root);
//   t.Lca(a, b) == root
#ifndef KILN_IR_SCOPE_TREE_H_
#define KILN_IR_SCOPE_TREE_H_

#include <utility>
#include <vector>

namespace kiln {

class ScopeTree {
 public:
  // Adds a scope under `parent` (-1 for a root) and returns its id.
  int Add(int parent) {
    int id = static_cast<int>(parent_.size());
    parent_.push_back(parent);
    if (parent < 0) {
      depth_.push_back(0);
      jump_.push_back(id);
    } else {
      depth_.push_back(depth_[parent] + 1);
      int j = jump_[parent];
      int jj = jump_[j];
      jump_.push_back(depth_[parent] - depth_[j] == depth_[j] - depth_[jj] ? jj : parent);
    }
    return id;
  }
  int Lca(int u, int v) const {
    if (depth_[u] < depth_[v]) std::swap(u, v);
    while (depth_[u] > depth_[v]) u = depth_[jump_[u]] >= depth_[v] ? jump_[u] : parent_[u];
    while (u != v) {
      if (jump_[u] != jump_[v]) {
        u = jump_[u];
        v = jump_[v];
      } else {
        u = parent_[u];
        v = parent_[v];
      }
    }
    return u;
  }

 private:
  std::vector<int> parent_, depth_, jump_;
};

}  // namespace kiln

#endif  // KILN_IR_SCOPE_TREE_H_
