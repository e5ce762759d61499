// ConvertLayout: one memoized bottom-up rewrite. Each rewritten 4-D value
// carries a layout state {orig, cur}: the layout the original program had it
// in and the layout its rewritten form is in. Consumers that do not know
// layouts get the value transformed back (memoized, so a value is restored
// once however many such consumers it has).
#include "passes/convert_layout/convert_layout.h"

#include <algorithm>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ir/op.h"
#include "ir/op_attrs.h"
#include "ir/status_macros.h"
#include "ir/traversal.h"

namespace kiln::passes {
namespace {

struct LState {
  std::string orig;
  std::string cur;
};

bool IsPermutationOf(const std::string& l, const std::string& base) {
  std::string a = l, b = base;
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  return a == b;
}

const CallNode* OpCallOf(const Expr& e, const OpNode** op) {
  const auto* c = e.as<CallNode>();
  if (c == nullptr) return nullptr;
  *op = c->op.as<OpNode>();
  return *op != nullptr ? c : nullptr;
}

int Rank(const Expr& e) {
  const auto* t = e->checked_type() ? e->checked_type().as<TensorTypeNode>() : nullptr;
  return t == nullptr ? -1 : t->ndim();
}

bool IsSealed(const Expr& e) {
  const auto* f = e.as<FunctionNode>();
  if (f == nullptr) return false;
  const AttrValue* p = f->GetAttr("Primitive");
  return (p != nullptr && p->i != 0) || f->GetAttr("Compiler") != nullptr;
}

// `axis` of a tensor in layout `from`, as an axis of the same tensor in `to`.
int64_t RemapAxis(int64_t axis, const std::string& from, const std::string& to) {
  const int64_t rank = static_cast<int64_t>(from.size());
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return -1;
  return static_cast<int64_t>(to.find(from[static_cast<size_t>(axis)]));
}

template <typename A>
Ref<A> CloneAttrs(const Attrs& attrs) {
  Ref<AttrsNode> c = attrs->Clone();
  return Ref<A>(static_cast<A*>(c.get()));  // shares ownership with `c`
}

class Converter : public ExprRewriter {
 public:
  Converter(std::string data_layout, std::string kernel_layout)
      : data_(std::move(data_layout)), kernel_(std::move(kernel_layout)) {}

  // The rewritten form of `pre` in its original layout.
  absl::StatusOr<Expr> Restore(const Expr& pre) {
    auto done = restored_.find(pre.get());
    if (done != restored_.end()) return done->second;
    Expr post = Post(pre);
    Expr out = post;
    if (auto it = states_.find(pre.get()); it != states_.end()) {
      KILN_ASSIGN_OR_RETURN(out, Transform(post, it->second.cur, it->second.orig));
    } else if (auto tt = tuple_states_.find(pre.get()); tt != tuple_states_.end()) {
      std::vector<Expr> fields;
      if (const auto* t = post.as<TupleNode>()) {
        fields = t->fields;
      } else {  // an operator returning a tuple (batch_norm)
        for (size_t i = 0; i < tt->second.size(); ++i) {
          KILN_ASSIGN_OR_RETURN(TupleGetItem g, MakeTupleGetItem(post, static_cast<int>(i)));
          fields.push_back(g);
        }
      }
      for (size_t i = 0; i < fields.size(); ++i) {
        if (tt->second[i]) {
          KILN_ASSIGN_OR_RETURN(fields[i],
                                Transform(fields[i], tt->second[i]->cur, tt->second[i]->orig));
        }
      }
      KILN_ASSIGN_OR_RETURN(Tuple nt, MakeTuple(std::move(fields)));
      out = nt;
    }
    restored_[pre.get()] = out;
    return out;
  }

 protected:
  absl::StatusOr<std::optional<Expr>> PreVisit(const Expr& pre) override {
    if (IsSealed(pre)) return std::optional<Expr>(pre);
    return std::optional<Expr>();
  }

  absl::StatusOr<Expr> PostVisit(const Expr& pre, Expr post) override {
    const OpNode* op = nullptr;
    if (const CallNode* c = OpCallOf(pre, &op)) return VisitOpCall(pre, c, op, std::move(post));
    if (const auto* t = pre.as<TupleNode>()) {
      std::vector<std::optional<LState>> fs;
      bool any = false;
      for (const Expr& f : t->fields) {
        auto it = states_.find(f.get());
        fs.push_back(it == states_.end() ? std::nullopt : std::optional<LState>(it->second));
        any |= fs.back().has_value();
      }
      if (any) tuple_states_[pre.get()] = std::move(fs);
      return post;
    }
    if (const auto* g = pre.as<TupleGetItemNode>()) {
      auto it = tuple_states_.find(g->tuple.get());
      if (it != tuple_states_.end()) {
        if (it->second[static_cast<size_t>(g->index)]) {
          states_[pre.get()] = *it->second[static_cast<size_t>(g->index)];
        }
        return post;
      }
    }
    return Generic(pre, std::move(post));
  }

 private:
  Expr Post(const Expr& pre) {
    Expr m = Memo(pre);
    return m ? m : pre;
  }
  const LState* StateOf(const Expr& pre) const {
    auto it = states_.find(pre.get());
    return it == states_.end() ? nullptr : &it->second;
  }
  bool Tracked(const Expr& pre) const { return StateOf(pre) != nullptr; }

  // By value: `orig` / `cur` may point into states_, which inserting may rehash.
  void SetState(const Expr& pre, std::string orig, std::string cur) {
    if (orig != cur) states_[pre.get()] = LState{std::move(orig), std::move(cur)};
  }

  // layout_transform(x, src, dst); identity and inverse pairs fold away.
  absl::StatusOr<Expr> Transform(const Expr& x, const std::string& src, const std::string& dst) {
    if (src == dst) return x;
    const OpNode* op = nullptr;
    if (const CallNode* c = OpCallOf(x, &op); c != nullptr && op->name() == "layout_transform") {
      const auto* a = c->attrs.as<LayoutTransformAttrs>();
      if (a->src_layout == dst && a->dst_layout == src) return c->args[0];
    }
    auto key = std::make_tuple(x.get(), src, dst);
    if (auto it = transforms_.find(key); it != transforms_.end()) return it->second;
    auto* attrs = new LayoutTransformAttrs();
    attrs->src_layout = src;
    attrs->dst_layout = dst;
    KILN_ASSIGN_OR_RETURN(Op lt, GetOp("layout_transform"));
    KILN_ASSIGN_OR_RETURN(Call c, MakeCall(lt, {x}, Ref<AttrsNode>(attrs)));
    transforms_[key] = c;
    return Expr(c);
  }

  // Every tracked child restored to its original layout.
  absl::StatusOr<Expr> Generic(const Expr& pre, Expr post) {
    bool any = false;
    ForEachChild(pre, [&](const Expr& c) {
      any |= Tracked(c) || tuple_states_.contains(c.get());
    });
    if (!any) return post;
    std::vector<Expr> kids = Children(pre);
    for (Expr& k : kids) {
      KILN_ASSIGN_OR_RETURN(k, Restore(k));
    }
    return WithNewChildren(pre, kids);
  }

  // `pre_arg`'s rewritten form in layout `to`, where an untracked value is
  // taken to be in `orig` (lower ranks are expanded to 4-D first).
  absl::StatusOr<Expr> InLayout(const Expr& pre_arg, const std::string& orig,
                                const std::string& to) {
    if (const LState* s = StateOf(pre_arg)) {
      KILN_ASSIGN_OR_RETURN(Expr r, Transform(Post(pre_arg), s->cur, s->orig));
      return Transform(r, s->orig, to);
    }
    Expr x = Post(pre_arg);
    const int rank = Rank(pre_arg);
    if (rank == 0) return x;
    if (rank < 4) {
      auto* a = new ExpandDimsAttrs();
      a->axis = 0;
      a->num_newaxis = 4 - rank;
      KILN_ASSIGN_OR_RETURN(Op ed, GetOp("expand_dims"));
      KILN_ASSIGN_OR_RETURN(Call c, MakeCall(ed, {x}, Ref<AttrsNode>(a)));
      x = c;
    }
    return Transform(x, orig, to);
  }

  absl::StatusOr<Expr> VisitOpCall(const Expr& pre, const CallNode* c, const OpNode* op,
                                   Expr post) {
    const std::string& name = op->name();
    const OpPattern pattern = op->def->pattern;
    if (name == "nn.conv2d") return Conv(pre, c, std::move(post));
    const LState* s0 = c->args.empty() ? nullptr : StateOf(c->args[0]);

    if (pattern == OpPattern::kElemWise && c->args.size() == 1 && Rank(pre) == 4) {
      if (s0 != nullptr) SetState(pre, s0->orig, s0->cur);
      return post;
    }
    if (pattern == OpPattern::kBroadcast && c->args.size() == 2 && name != "nn.bias_add" &&
        name != "nn.prelu" && Rank(pre) == 4) {
      const LState* s1 = StateOf(c->args[1]);
      if (s0 == nullptr && s1 == nullptr) return post;
      const size_t t = s0 != nullptr ? 0 : 1;  // the operand whose layout wins
      const LState st = *(t == 0 ? s0 : s1);
      const int other_rank = Rank(c->args[1 - t]);
      if (other_rank < 0 || other_rank > 4) return Generic(pre, std::move(post));
      std::vector<Expr> args(2);
      args[t] = Post(c->args[t]);
      KILN_ASSIGN_OR_RETURN(args[1 - t], InLayout(c->args[1 - t], st.orig, st.cur));
      KILN_ASSIGN_OR_RETURN(Call nc, MakeCall(c->op, std::move(args), c->attrs));
      SetState(pre, st.orig, st.cur);
      return Expr(nc);
    }
    if (s0 == nullptr) {
      // concatenate of a tuple with converted fields.
      if (name == "concatenate") return Concat(pre, c, std::move(post));
      return Generic(pre, std::move(post));
    }
    const LState st = *s0;
    std::vector<Expr> args;
    for (const Expr& a : c->args) args.push_back(Post(a));
    Attrs attrs;
    if (name == "nn.bias_add") {
      auto a = CloneAttrs<BiasAddAttrs>(c->attrs);
      a->axis = RemapAxis(a->axis, st.orig, st.cur);
      attrs = a;
    } else if (name == "nn.batch_norm") {
      auto a = CloneAttrs<BatchNormAttrs>(c->attrs);
      a->axis = RemapAxis(a->axis, st.orig, st.cur);
      attrs = a;
    } else if (name == "nn.softmax" || name == "nn.log_softmax") {
      auto a = CloneAttrs<SoftmaxAttrs>(c->attrs);
      a->axis = RemapAxis(a->axis, st.orig, st.cur);
      attrs = a;
    } else if (name == "nn.max_pool2d" || name == "nn.avg_pool2d") {
      auto a = CloneAttrs<Pool2DAttrs>(c->attrs);
      if (a->layout != st.orig || (!a->out_layout.empty() && a->out_layout != a->layout))
        return Generic(pre, std::move(post));
      a->layout = st.cur;
      a->out_layout.clear();
      attrs = a;
    } else if (name == "nn.global_avg_pool2d" || name == "nn.global_max_pool2d") {
      auto a = CloneAttrs<GlobalPool2DAttrs>(c->attrs);
      if (a->layout != st.orig || (!a->out_layout.empty() && a->out_layout != a->layout))
        return Generic(pre, std::move(post));
      a->layout = st.cur;
      a->out_layout.clear();
      attrs = a;
    } else {
      return Generic(pre, std::move(post));
    }
    for (size_t i = 1; i < c->args.size(); ++i) {
      if (Tracked(c->args[i])) {
        KILN_ASSIGN_OR_RETURN(args[i], Restore(c->args[i]));
      }
    }
    KILN_ASSIGN_OR_RETURN(Call nc, MakeCall(c->op, std::move(args), attrs));
    if (name == "nn.batch_norm") {
      tuple_states_[pre.get()] = {st, std::nullopt, std::nullopt};
    } else {
      SetState(pre, st.orig, st.cur);
    }
    return Expr(nc);
  }

  absl::StatusOr<Expr> Conv(const Expr& pre, const CallNode* c, Expr post) {
    const auto* a = c->attrs.as<Conv2DAttrs>();
    const std::string out = a->out_layout.empty() ? a->data_layout : a->out_layout;
    if (a->data_layout.size() != 4 || a->kernel_layout.size() != 4 || out != a->data_layout) {
      return Generic(pre, std::move(post));
    }
    std::string kernel = kernel_;
    if (kernel.empty() || kernel == "default") kernel = data_ == "NHWC" ? "HWIO" : "OIHW";
    if (a->data_layout == data_ && a->kernel_layout == kernel) return Generic(pre, std::move(post));
    KILN_ASSIGN_OR_RETURN(Expr data, InLayout(c->args[0], a->data_layout, data_));
    KILN_ASSIGN_OR_RETURN(Expr w, Restore(c->args[1]));
    KILN_ASSIGN_OR_RETURN(w, Transform(w, a->kernel_layout, kernel));
    auto na = CloneAttrs<Conv2DAttrs>(c->attrs);
    na->data_layout = data_;
    na->kernel_layout = kernel;
    na->out_layout.clear();
    KILN_ASSIGN_OR_RETURN(Call nc, MakeCall(c->op, {data, w}, na));
    SetState(pre, a->data_layout, data_);
    return Expr(nc);
  }

  absl::StatusOr<Expr> Concat(const Expr& pre, const CallNode* c, Expr post) {
    auto tt = tuple_states_.find(c->args[0].get());
    const auto* tup = c->args[0].as<TupleNode>();
    if (tt == tuple_states_.end() || tup == nullptr) return Generic(pre, std::move(post));
    LState st;
    for (const auto& s : tt->second) {
      if (s) {
        st = *s;
        break;
      }
    }
    std::vector<Expr> fields;
    for (const Expr& f : tup->fields) {
      if (Rank(f) != 4) return Generic(pre, std::move(post));
      KILN_ASSIGN_OR_RETURN(Expr nf, InLayout(f, st.orig, st.cur));
      fields.push_back(nf);
    }
    KILN_ASSIGN_OR_RETURN(Tuple nt, MakeTuple(std::move(fields)));
    auto a = CloneAttrs<ConcatenateAttrs>(c->attrs);
    a->axis = RemapAxis(a->axis, st.orig, st.cur);
    KILN_ASSIGN_OR_RETURN(Call nc, MakeCall(c->op, {nt}, a));
    SetState(pre, st.orig, st.cur);
    return Expr(nc);
  }

  const std::string data_;
  const std::string kernel_;
  absl::flat_hash_map<const ExprNode*, LState> states_;
  absl::flat_hash_map<const ExprNode*, std::vector<std::optional<LState>>> tuple_states_;
  absl::flat_hash_map<const ExprNode*, Expr> restored_;
  absl::flat_hash_map<std::tuple<const ExprNode*, std::string, std::string>, Expr> transforms_;
};

absl::Status Validate(const DesiredLayouts& desired) {
  for (const auto& [op, layouts] : desired) {
    if (op != "nn.conv2d") {
      return absl::InvalidArgumentError(absl::StrCat(
          "ConvertLayout: no layout conversion for operator '", op,
          "'; supported: nn.conv2d (pools, bias_add, batch_norm, ... follow their input)"));
    }
    if (layouts.empty() || layouts.size() > 2 || !IsPermutationOf(layouts[0], "NCHW") ||
        layouts[0].size() != 4 ||
        (layouts.size() == 2 && layouts[1] != "default" &&
         (layouts[1].size() != 4 || !IsPermutationOf(layouts[1], "OIHW")))) {
      return absl::InvalidArgumentError(absl::StrCat(
          "ConvertLayout: desired layouts for nn.conv2d must be {data, kernel} with data a "
          "permutation of NCHW (e.g. NHWC) and kernel a permutation of OIHW or \"default\"; got {",
          absl::StrJoin(layouts, ", "), "}"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Function> ConvertLayoutFunction(const Function& f, const DesiredLayouts& desired) {
  KILN_RETURN_IF_ERROR(Validate(desired));
  auto it = desired.find("nn.conv2d");
  if (it == desired.end() || IsSealed(f)) return f;
  Converter conv(it->second[0], it->second.size() > 1 ? it->second[1] : "default");
  KILN_RETURN_IF_ERROR(conv.Rewrite(f->body).status());
  KILN_ASSIGN_OR_RETURN(Expr body, conv.Restore(f->body));
  if (body == f->body) return f;
  return MakeFunction(f->params, body, f->ret_type, f->type_params, f->attrs);
}

PassPtr ConvertLayout(DesiredLayouts desired) {
  return MakeFunctionPass(
      PassInfo{"ConvertLayout", 3, {"InferType"}},
      [desired = std::move(desired)](const Function& f, const Module&,
                                     const PassContext&) -> absl::StatusOr<Function> {
        return ConvertLayoutFunction(f, desired);
      });
}

}  // namespace kiln::passes
