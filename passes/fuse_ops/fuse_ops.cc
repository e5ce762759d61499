// FuseOps: TVM's graph partitioner (IndexedForwardGraph + post-dominator tree
// + GraphPartitioner, three phases) with iterative traversals throughout.
#include "passes/fuse_ops/fuse_ops.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "ir/op.h"
#include "ir/status_macros.h"
#include "ir/traversal.h"

namespace kiln::passes {
namespace {

OpPattern Combine(OpPattern a, OpPattern b) {
  return static_cast<int>(a) > static_cast<int>(b) ? a : b;
}
bool AtMost(OpPattern a, OpPattern b) { return static_cast<int>(a) <= static_cast<int>(b); }

// Primitive (already fused) or offloaded functions are not entered.
bool IsSealedFunction(const ExprNode* e) {
  const auto* f = e->kind == ExprKind::kFunction ? static_cast<const FunctionNode*>(e) : nullptr;
  if (f == nullptr) return false;
  const AttrValue* p = f->GetAttr("Primitive");
  if (p != nullptr && p->kind == AttrValue::Kind::kInt && p->i != 0) return true;
  return f->GetAttr("Compiler") != nullptr;
}

// Nodes that are not graph nodes: they are used in place wherever they occur.
bool IsInlineLeaf(const ExprNode* e) {
  return e->kind == ExprKind::kConstant || e->kind == ExprKind::kOp;
}

bool IsOpCall(const ExprNode* e) {
  return e->kind == ExprKind::kCall &&
         static_cast<const CallNode*>(e)->op->kind == ExprKind::kOp;
}

struct Edge {
  int node;
  OpPattern pattern;
};

struct GraphNode {
  OpPattern pattern = OpPattern::kOpaque;
  bool extern_ref = false;
  std::vector<Edge> outputs;
};

// The dataflow graph in post-DFS order (children before parents).
struct Graph {
  std::vector<Expr> order;
  absl::flat_hash_map<const ExprNode*, int> index;
  std::vector<GraphNode> nodes;
};

// Every node reachable from `root` except constants and operators, not
// entering sealed functions; iterative.
std::vector<Expr> PostDfs(const Expr& root) {
  std::vector<Expr> order;
  absl::flat_hash_map<const ExprNode*, bool> state;  // false: on stack, true: done
  struct Frame {
    Expr e;
    std::vector<Expr> kids;
    size_t next = 0;
  };
  std::vector<Frame> stack;
  auto push = [&](const Expr& e) {
    if (IsInlineLeaf(e.get()) || state.contains(e.get())) return;
    state[e.get()] = false;
    Frame f{e, {}, 0};
    if (!IsSealedFunction(e.get())) f.kids = Children(e);
    stack.push_back(std::move(f));
  };
  push(root);
  while (!stack.empty()) {
    Frame& top = stack.back();
    if (top.next < top.kids.size()) {
      Expr k = top.kids[top.next++];
      push(k);
      continue;
    }
    state[top.e.get()] = true;
    order.push_back(std::move(top.e));
    stack.pop_back();
  }
  return order;
}

bool SameShape(const Type& a, const Type& b) {
  const auto* ta = a.as<TensorTypeNode>();
  const auto* tb = b.as<TensorTypeNode>();
  return ta != nullptr && tb != nullptr && ta->shape == tb->shape;
}

absl::StatusOr<Graph> BuildGraph(const Expr& body) {
  Graph g;
  g.order = PostDfs(body);
  g.nodes.resize(g.order.size());
  for (size_t i = 0; i < g.order.size(); ++i) g.index[g.order[i].get()] = static_cast<int>(i);

  auto update = [&](const Expr& child, int parent, OpPattern pattern) {
    if (IsInlineLeaf(child.get())) return;
    GraphNode& n = g.nodes[g.index.at(child.get())];
    if (parent >= 0) {
      n.outputs.push_back({parent, pattern});
    } else {
      n.extern_ref = true;
    }
  };
  update(body, -1, OpPattern::kOpaque);

  for (size_t i = 0; i < g.order.size(); ++i) {
    const Expr& e = g.order[i];
    const int self = static_cast<int>(i);
    GraphNode& node = g.nodes[i];
    node.pattern = OpPattern::kOpaque;
    if (IsSealedFunction(e.get())) continue;
    switch (e->kind) {
      case ExprKind::kCall: {
        const auto* c = static_cast<const CallNode*>(e.get());
        if (const auto* op = c->op.as<OpNode>()) {
          if (!c->checked_type()) {
            return absl::FailedPreconditionError(
                absl::StrCat("FuseOps needs inferred types (run InferType first): the call of ",
                             op->name(), " has none"));
          }
          OpPattern pat = op->def->pattern;
          // A dyn.* call whose extents depend on its arguments' values stays
          // alone: the VM computes its output shape with the operator's own
          // data-dependent shape function (lowering/vm/shape_func.h) before
          // the kernel runs, which a fused body would not allow.
          if (absl::StartsWith(op->name(), "dyn.")) {
            const auto* tt = c->checked_type().as<TensorTypeNode>();
            if (tt == nullptr || !ShapeIsStatic(tt->shape)) pat = OpPattern::kOpaque;
          }
          node.pattern = pat;
          for (const Expr& a : c->args) {
            OpPattern edge = pat;
            if (edge == OpPattern::kBroadcast && a->checked_type() &&
                SameShape(c->checked_type(), a->checked_type())) {
              edge = OpPattern::kElemWise;
            }
            update(a, self, edge);
          }
        } else {
          update(c->op, -1, OpPattern::kOpaque);
          for (const Expr& a : c->args) update(a, -1, OpPattern::kOpaque);
        }
        break;
      }
      case ExprKind::kTuple: {
        node.pattern = OpPattern::kTuple;
        for (const Expr& f : static_cast<const TupleNode*>(e.get())->fields) {
          if (f->checked_type().as<TensorTypeNode>() != nullptr) {
            update(f, self, OpPattern::kInjective);
          } else {
            update(f, -1, OpPattern::kOpaque);
          }
        }
        break;
      }
      case ExprKind::kTupleGetItem: {
        const Expr& t = static_cast<const TupleGetItemNode*>(e.get())->tuple;
        const auto* tt = t->checked_type().as<TupleTypeNode>();
        bool all_tensors = tt != nullptr;
        if (tt != nullptr) {
          for (const Type& f : tt->fields) all_tensors &= f.as<TensorTypeNode>() != nullptr;
        }
        if (all_tensors) {
          node.pattern = OpPattern::kInjective;
          update(t, self, OpPattern::kInjective);
        } else {
          update(t, -1, OpPattern::kOpaque);
        }
        break;
      }
      default:
        // Var, GlobalVar, Constructor, Function, Let, If, Match, Ref*: fusion
        // barriers. Their children (let values, branches, bodies) are roots.
        ForEachChild(e, [&](const Expr& c) { update(c, -1, OpPattern::kOpaque); });
        break;
    }
  }
  return g;
}

// Post-dominator tree over the graph.
struct DomNode {
  int parent = -1;
  int depth = 1;
  OpPattern pattern = OpPattern::kOpaque;
};

std::vector<DomNode> PostDominators(const Graph& g) {
  const int n = static_cast<int>(g.nodes.size());
  std::vector<DomNode> dom(static_cast<size_t>(n));
  auto lca = [&](int a, int b, OpPattern* pat) {
    while (a != b) {
      if (a < 0 || b < 0) return -1;
      DomNode& da = dom[static_cast<size_t>(a)];
      DomNode& db = dom[static_cast<size_t>(b)];
      if (da.depth < db.depth) {
        *pat = Combine(*pat, db.pattern);
        b = db.parent;
      } else if (db.depth < da.depth) {
        *pat = Combine(*pat, da.pattern);
        a = da.parent;
      } else {
        *pat = Combine(*pat, da.pattern);
        *pat = Combine(*pat, db.pattern);
        a = da.parent;
        b = db.parent;
      }
    }
    return a;
  };
  for (int i = n - 1; i >= 0; --i) {
    const GraphNode& gn = g.nodes[static_cast<size_t>(i)];
    DomNode& d = dom[static_cast<size_t>(i)];
    if (gn.extern_ref || gn.outputs.empty()) {
      d.parent = -1;
      d.depth = 1;
      d.pattern = OpPattern::kOpaque;
      continue;
    }
    OpPattern pat = OpPattern::kElemWise;
    int parent = gn.outputs[0].node;
    pat = Combine(pat, gn.outputs[0].pattern);
    for (size_t k = 1; k < gn.outputs.size(); ++k) {
      parent = lca(parent, gn.outputs[k].node, &pat);
      pat = Combine(pat, gn.outputs[k].pattern);
    }
    d.parent = parent;
    d.depth = parent >= 0 ? dom[static_cast<size_t>(parent)].depth + 1 : 1;
    d.pattern = pat;
  }
  return dom;
}

struct Group {
  int parent = -1;
  OpPattern pattern = OpPattern::kOpaque;
  bool has_anchor = false;
  int64_t num_nodes = 1;
};

class Partitioner {
 public:
  Partitioner(const Graph& g, const std::vector<DomNode>& dom, int64_t max_depth)
      : g_(g), dom_(dom), max_depth_(max_depth) {
    groups_.resize(g.nodes.size());
    mark_.assign(g.nodes.size(), 0);
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      groups_[i].pattern = g.nodes[i].pattern;
      groups_[i].has_anchor = g.nodes[i].pattern == OpPattern::kOutEWiseFusable;
    }
  }

  void Run() {
    for (int phase = 0; phase < 3; ++phase) RunFuse(phase);
  }

  int FindRoot(int i) {
    int root = i;
    while (groups_[static_cast<size_t>(root)].parent >= 0)
      root = groups_[static_cast<size_t>(root)].parent;
    while (groups_[static_cast<size_t>(i)].parent >= 0) {  // path compression
      int next = groups_[static_cast<size_t>(i)].parent;
      groups_[static_cast<size_t>(i)].parent = root;
      i = next;
    }
    return root;
  }
  const Group& group(int i) const { return groups_[static_cast<size_t>(i)]; }

 private:
  Group& G(int i) { return groups_[static_cast<size_t>(i)]; }

  void MergeFromTo(int child, int parent) {
    child = FindRoot(child);
    parent = FindRoot(parent);
    if (child == parent) return;
    G(parent).num_nodes += G(child).num_nodes;
    G(child).parent = parent;
    if (G(child).has_anchor) {
      G(parent).has_anchor = true;
      G(parent).pattern = Combine(G(child).pattern, G(parent).pattern);
    }
  }

  // Every node on a path from src (exclusive) to sink (inclusive) satisfies
  // fcond(pattern of its group, is_sink).
  template <typename F>
  bool CheckPath(int src, int sink, F fcond) {
    NewWalk();
    std::vector<int> stack;
    for (const Edge& e : g_.nodes[static_cast<size_t>(src)].outputs) stack.push_back(e.node);
    while (!stack.empty()) {
      int v = stack.back();
      stack.pop_back();
      if (!Visit(v)) continue;
      if (!fcond(G(FindRoot(v)).pattern, v == sink)) return false;
      if (v == sink) continue;
      for (const Edge& e : g_.nodes[static_cast<size_t>(v)].outputs) stack.push_back(e.node);
    }
    return true;
  }

  void CommitFuse(int src, int sink) {
    NewWalk();
    std::vector<int> stack{src};
    while (!stack.empty()) {
      int v = stack.back();
      stack.pop_back();
      if (v == sink || !Visit(v)) continue;
      MergeFromTo(v, sink);
      for (const Edge& e : g_.nodes[static_cast<size_t>(v)].outputs) stack.push_back(e.node);
    }
  }

  // Size of the group that fusing child into dom_parent would make.
  int64_t CountFusedNodes(int child, int dom_parent) {
    NewWalk();
    std::vector<int> roots;  // distinct groups counted so far (few)
    const int sink_root = FindRoot(dom_parent);
    int64_t sum = G(sink_root).num_nodes;
    roots.push_back(sink_root);
    std::vector<int> stack{child};
    while (!stack.empty()) {
      int v = stack.back();
      stack.pop_back();
      if (v == dom_parent || !Visit(v)) continue;
      int r = FindRoot(v);
      if (std::find(roots.begin(), roots.end(), r) == roots.end()) {
        roots.push_back(r);
        sum += G(r).num_nodes;
      }
      for (const Edge& e : g_.nodes[static_cast<size_t>(v)].outputs) stack.push_back(e.node);
    }
    return sum;
  }

  void RunFuse(int phase) {
    const int n = static_cast<int>(groups_.size());
    for (int nid = 0; nid < n; ++nid) {
      const Group& gnode = G(nid);
      const DomNode& dnode = dom_[static_cast<size_t>(nid)];
      if (gnode.pattern == OpPattern::kOpaque) continue;
      if (dnode.parent < 0) continue;
      const int dparent = dnode.parent;
      if (CountFusedNodes(nid, dparent) > max_depth_) continue;

      if (phase == 2) {
        // Fuse injective ops into intermediate tuples, if any.
        if (!AtMost(gnode.pattern, OpPattern::kInjective)) continue;
        const int droot = FindRoot(dparent);
        if (G(droot).pattern == OpPattern::kTuple) continue;
        if (G(dparent).pattern == OpPattern::kTuple &&
            AtMost(G(droot).pattern, OpPattern::kInjective)) {
          auto fcond = [](OpPattern k, bool) { return AtMost(k, OpPattern::kInjective); };
          if (CheckPath(nid, dparent, fcond)) CommitFuse(nid, dparent);
        }
        continue;
      }
      if (FindRoot(nid) == FindRoot(dparent)) continue;
      if (G(dparent).pattern == OpPattern::kTuple) continue;  // not into tuples yet
      if (gnode.pattern == OpPattern::kOutEWiseFusable) {
        if (phase != 0) continue;
        if (dnode.pattern == OpPattern::kElemWise) {
          auto fcond = [](OpPattern k, bool) { return AtMost(k, OpPattern::kBroadcast); };
          if (CheckPath(nid, dparent, fcond)) CommitFuse(nid, dparent);
        }
      } else if (AtMost(gnode.pattern, OpPattern::kBroadcast)) {
        if (AtMost(dnode.pattern, OpPattern::kInjective) ||
            dnode.pattern == OpPattern::kCommReduce) {
          auto fcond = [](OpPattern k, bool is_sink) {
            if (!is_sink) return AtMost(k, OpPattern::kInjective);
            return AtMost(k, OpPattern::kInjective) || k == OpPattern::kCommReduce ||
                   k == OpPattern::kOutEWiseFusable;
          };
          if (CheckPath(nid, dparent, fcond)) CommitFuse(nid, dparent);
        }
      } else if (gnode.pattern == OpPattern::kInjective || gnode.pattern == OpPattern::kTuple) {
        if (phase != 1) continue;  // after conv2d groups are complete
        auto fcond = [](OpPattern k, bool) { return AtMost(k, OpPattern::kInjective); };
        if (CheckPath(nid, dparent, fcond)) CommitFuse(nid, dparent);
      }
      // kCommReduce: nothing to do.
    }
  }

  const Graph& g_;
  const std::vector<DomNode>& dom_;
  const int64_t max_depth_;
  std::vector<Group> groups_;
  // Visited marks: node v is visited in the current walk when mark_[v] == epoch_.
  bool Visit(int v) {
    int& m = mark_[static_cast<size_t>(v)];
    if (m == epoch_) return false;
    m = epoch_;
    return true;
  }
  void NewWalk() { ++epoch_; }
  std::vector<int> mark_;
  int epoch_ = 0;
};

struct GroupInfo {
  bool has_call = false;
  std::vector<Var> params;
  std::vector<Expr> args;
  absl::flat_hash_map<const ExprNode*, size_t> param_of;
};

// Rebuilds the body with one primitive function per group.
absl::StatusOr<Expr> Rewrite(const Graph& g, Partitioner& part) {
  const size_t n = g.order.size();
  std::vector<int> root(n);
  absl::flat_hash_map<int, GroupInfo> info;
  for (size_t i = 0; i < n; ++i) {
    root[i] = part.FindRoot(static_cast<int>(i));
    if (IsOpCall(g.order[i].get())) info[root[i]].has_call = true;
  }
  std::vector<Expr> inner(n), out(n);
  auto out_of = [&](const Expr& c) -> Expr {
    if (IsInlineLeaf(c.get())) return c;
    return out[static_cast<size_t>(g.index.at(c.get()))];
  };
  for (size_t i = 0; i < n; ++i) {
    const Expr& e = g.order[i];
    if (IsSealedFunction(e.get()) || e->kind == ExprKind::kVar ||
        e->kind == ExprKind::kGlobalVar || e->kind == ExprKind::kConstructor) {
      out[i] = e;
      continue;
    }
    const int r = root[i];
    auto it = info.find(r);
    std::vector<Expr> kids = Children(e);
    if (it == info.end() || !it->second.has_call) {
      for (Expr& k : kids) k = out_of(k);
      KILN_ASSIGN_OR_RETURN(out[i], WithNewChildren(e, kids));
      continue;
    }
    GroupInfo& gi = it->second;
    for (Expr& k : kids) {
      if (IsInlineLeaf(k.get())) continue;
      const size_t ki = static_cast<size_t>(g.index.at(k.get()));
      if (root[ki] == r) {
        k = inner[ki];
        continue;
      }
      Expr arg = out[ki];
      auto pit = gi.param_of.find(arg.get());
      if (pit != gi.param_of.end()) {
        k = gi.params[pit->second];
        continue;
      }
      if (!k->checked_type()) {
        return absl::FailedPreconditionError(
            "FuseOps needs inferred types (run InferType first): an input of a fused group has "
            "none");
      }
      Var p = MakeVar(absl::StrCat("p", gi.params.size()), k->checked_type());
      gi.param_of[arg.get()] = gi.params.size();
      gi.params.push_back(p);
      gi.args.push_back(arg);
      k = p;
    }
    KILN_ASSIGN_OR_RETURN(inner[i], WithNewChildren(e, kids));
    if (static_cast<int>(i) != r) continue;
    KILN_ASSIGN_OR_RETURN(
        Function fn,
        MakeFunction(gi.params, inner[i], e->checked_type(), {},
                     MakeDictAttrs({{"Primitive", AttrValue::Int(1)}})));
    KILN_ASSIGN_OR_RETURN(out[i], MakeCall(fn, gi.args));
  }
  return out_of(g.order.empty() ? Expr() : g.order.back());
}

}  // namespace

absl::StatusOr<Function> FuseFunction(const Function& f, const FuseOptions& opts) {
  if (IsSealedFunction(f.get())) return f;
  if (opts.max_depth < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("FuseOps: max_depth must be >= 1; got ", opts.max_depth));
  }
  if (IsInlineLeaf(f->body.get())) return f;
  KILN_ASSIGN_OR_RETURN(Graph g, BuildGraph(f->body));
  std::vector<DomNode> dom = PostDominators(g);
  Partitioner part(g, dom, opts.max_depth);
  part.Run();
  KILN_ASSIGN_OR_RETURN(Expr body, Rewrite(g, part));
  if (body == f->body) return f;
  return MakeFunction(f->params, body, f->ret_type, f->type_params, f->attrs);
}

PassPtr FuseOps() {
  return MakeFunctionPass(
      PassInfo{"FuseOps", 1, {"InferType"}},
      [](const Function& f, const Module&, const PassContext& ctx) -> absl::StatusOr<Function> {
        FuseOptions opts;
        KILN_ASSIGN_OR_RETURN(opts.max_depth,
                              ctx.GetConfig<int64_t>("relay.FuseOps.max_depth", 256));
        return FuseFunction(f, opts);
      });
}

}  // namespace kiln::passes
