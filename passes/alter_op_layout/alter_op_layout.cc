// AlterOpLayout: NCHWc blocking of conv2d for CPU targets, carried through
// elementwise ops; one memoized bottom-up rewrite (the same layout-state
// scheme as ConvertLayout: {orig, cur} per rewritten 4-D value). For CUDA
// targets: a matmul by a constant [K, N] (ONNX MatMul's weights) becomes a
// dense by its transpose [N, K] (FoldConstant folds it), so both GEMM
// operands are k-major, the layout Hopper's wgmma reads.
#include "passes/alter_op_layout/alter_op_layout.h"

#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "ir/op.h"
#include "ir/op_attrs.h"
#include "ir/status_macros.h"
#include "ir/tensor.h"
#include "ir/traversal.h"
#include "passes/infra/expr_util.h"
#include "types/infer_type.h"

namespace kiln::passes {
namespace {

struct LState {
  std::string orig;
  std::string cur;
  // A blocked convolution output whose channels were padded to a multiple
  // of the block (SqueezeNet's 1000 classes as 63 blocks of 16): the true
  // channel count, or 0. Restoring the original layout slices them off.
  int64_t channels = 0;
  bool operator==(const LState& o) const {
    return orig == o.orig && cur == o.cur && channels == o.channels;
  }
};

// Output channels that no block of 16 divides are padded up to one when the
// layer is wide and the padding small (at most 2%): the convolution then
// runs with full vectors instead of NCHW8c (or no blocking at all).
constexpr int64_t kPadBlock = 16;
constexpr int64_t kMinPaddedChannels = 256;

int64_t PaddedChannels(const Dim& channels) {
  if (!channels.is_static()) return 0;
  const int64_t c = channels.value();
  if (c % kPadBlock == 0 || c < kMinPaddedChannels) return 0;
  const int64_t padded = (c + kPadBlock - 1) / kPadBlock * kPadBlock;
  return padded * 50 <= c * 51 ? padded : 0;
}

// Channels whose largest block is under 8 (ShuffleNet's 58 and 116: blocks
// of 2 and 4, a quarter or an eighth of an AVX2 vector) padded to whole
// vector blocks: to a multiple of 16 where that adds at most 1/8, else of 8
// where that adds at most 1/4; 0 where neither holds or no padding is needed.
int64_t NarrowPaddedChannels(const Dim& channels) {
  if (!channels.is_static()) return 0;
  const int64_t c = channels.value();
  if (c < 8 || c % 8 == 0) return 0;
  const int64_t p16 = (c + 15) / 16 * 16;
  if ((p16 - c) * 8 <= c) return p16;
  const int64_t p8 = (c + 7) / 8 * 8;
  return (p8 - c) * 4 <= c ? p8 : 0;
}

// `x` padded with zeros on `axis` from `size` to `padded` entries.
absl::StatusOr<Expr> PadAxis(const Expr& x, size_t ndim, size_t axis, int64_t size,
                             int64_t padded) {
  if (padded < size) {
    return absl::InternalError(absl::StrCat("AlterOpLayout: padding axis ", axis, " of ", size,
                                            " entries to ", padded));
  }
  auto* attrs = new PadAttrs();
  attrs->pad_width.assign(ndim, {0, 0});
  attrs->pad_width[axis][1] = padded - size;
  KILN_ASSIGN_OR_RETURN(Op pad, GetOp("nn.pad"));
  KILN_ASSIGN_OR_RETURN(
      Call c, MakeCall(pad, {x, Expr(MakeScalarConstant(DataType::Float(32), 0.0))},
                       Ref<AttrsNode>(attrs)));
  return Expr(c);
}

// The first `channels` channels (axis 1) of a 4-D `x`.
absl::StatusOr<Expr> SliceChannels(const Expr& x, int64_t channels) {
  auto* attrs = new StridedSliceAttrs();
  attrs->begin = {0};
  attrs->end = {channels};
  attrs->axes = std::vector<int64_t>{1};
  KILN_ASSIGN_OR_RETURN(Op slice, GetOp("strided_slice"));
  KILN_ASSIGN_OR_RETURN(Call c, MakeCall(slice, {x}, Ref<AttrsNode>(attrs)));
  return Expr(c);
}

const TensorTypeNode* TT(const Expr& e) {
  return e->checked_type() ? e->checked_type().as<TensorTypeNode>() : nullptr;
}

bool IsSealed(const Expr& e) {
  const auto* f = e.as<FunctionNode>();
  if (f == nullptr) return false;
  const AttrValue* p = f->GetAttr("Primitive");
  return (p != nullptr && p->i != 0) || f->GetAttr("Compiler") != nullptr;
}

int64_t BlockFactor(const Dim& channels) {
  if (!channels.is_static()) return 0;
  for (int64_t f : {16, 8, 4, 2}) {
    if (channels.value() % f == 0) return f;
  }
  return 0;
}

absl::StatusOr<Expr> LayoutTransform(const Expr& x, const std::string& src,
                                     const std::string& dst) {
  if (src == dst) return x;
  if (const auto* c = x.as<CallNode>()) {
    if (const auto* a = c->attrs.as<LayoutTransformAttrs>()) {
      if (a->src_layout == dst && a->dst_layout == src) return c->args[0];
    }
  }
  auto* attrs = new LayoutTransformAttrs();
  attrs->src_layout = src;
  attrs->dst_layout = dst;
  KILN_ASSIGN_OR_RETURN(Op lt, GetOp("layout_transform"));
  KILN_ASSIGN_OR_RETURN(Call c, MakeCall(lt, {x}, Ref<AttrsNode>(attrs)));
  return Expr(c);
}

// How Blocked rewrites a convolution besides its layouts.
struct BlockOptions {
  // Input channels zero-padded to this many (0: none). The weight gets
  // zero input channels on its I axis (groups = 1 only); a depthwise
  // conv's weight gets them as zero filters from out_channels.
  int64_t data_channels = 0;
  bool depthwise = false;
  // Output channels padded to this many (0: none): zero filters, and the
  // output's state keeps the true count (Restore slices it).
  int64_t out_channels = 0;
  std::optional<Expr> weight;  // replaces c's weight (OIHW) when set
  int64_t groups = 0;          // replaces c's group count when > 0
};

class Blocker : public ExprRewriter {
 public:
  absl::StatusOr<Expr> Restore(const Expr& pre) {
    if (auto d = restored_.find(pre.get()); d != restored_.end()) return d->second;
    Expr out = Post(pre);
    if (auto it = states_.find(pre.get()); it != states_.end()) {
      const int64_t channels = it->second.channels;
      KILN_ASSIGN_OR_RETURN(out, Transform(out, it->second.cur, it->second.orig));
      if (channels > 0) {
        KILN_ASSIGN_OR_RETURN(out, SliceChannels(out, channels));
      }
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
    const auto* c = pre.as<CallNode>();
    const auto* op = c != nullptr ? c->op.as<OpNode>() : nullptr;
    if (op == nullptr) return Generic(pre, std::move(post));
    if (op->name() == "nn.conv2d") return Conv(pre, c, std::move(post));
    const TensorTypeNode* out_t = TT(pre);
    const LState* s0 = c->args.empty() ? nullptr : StateOf(c->args[0]);
    if (op->def->pattern == OpPattern::kElemWise && c->args.size() == 1 && s0 != nullptr &&
        out_t != nullptr && out_t->ndim() == 4) {
      const LState st = *s0;  // copy: inserting may rehash the map
      states_[pre.get()] = st;
      return post;
    }
    if ((op->name() == "nn.max_pool2d" || op->name() == "nn.avg_pool2d") && s0 != nullptr) {
      KILN_ASSIGN_OR_RETURN(std::optional<Expr> r, BlockedPool<Pool2DAttrs>(pre, c, *s0));
      if (r) return *r;
    }
    if ((op->name() == "nn.global_avg_pool2d" || op->name() == "nn.global_max_pool2d") &&
        s0 != nullptr) {
      KILN_ASSIGN_OR_RETURN(std::optional<Expr> r, BlockedPool<GlobalPool2DAttrs>(pre, c, *s0));
      if (r) return *r;
    }
    if (op->name() == "concatenate" && c->args.size() == 1 && out_t != nullptr && out_t->ndim() == 4) {
      // Channel concatenation of tensors blocked alike stays blocked (axis 1
      // of NCHW{c}c is the channel-block axis).
      const auto* ca = c->attrs.as<ConcatenateAttrs>();
      const auto* tup = c->args[0].as<TupleNode>();
      const int64_t axis = ca == nullptr ? 0 : (ca->axis < 0 ? ca->axis + 4 : ca->axis);
      if (tup != nullptr && axis == 1 && !tup->fields.empty()) {
        const LState* f0 = StateOf(tup->fields[0]);
        // Padded channels would land between the fields: not for those.
        bool same = f0 != nullptr && f0->orig == "NCHW" && f0->channels == 0;
        for (const Expr& f : tup->fields) {
          const LState* sf = StateOf(f);
          same = same && sf != nullptr && *sf == *f0;
        }
        if (same) {
          const LState st = *f0;
          std::vector<Expr> fields;
          for (const Expr& f : tup->fields) fields.push_back(Post(f));
          KILN_ASSIGN_OR_RETURN(Tuple nt, MakeTuple(std::move(fields)));
          KILN_ASSIGN_OR_RETURN(Call nc, MakeCall(c->op, {Expr(nt)}, c->attrs));
          states_[pre.get()] = st;
          return Expr(nc);
        }
      }
    }
    if (op->name() == "nn.bias_add" && c->args.size() == 2 && s0 != nullptr && s0->orig == "NCHW" &&
        out_t != nullptr && out_t->ndim() == 4) {
      // bias_add(x, b) on a blocked x: add(x, b as [1, C/c, 1, 1, c]).
      const auto* ba = c->attrs.as<BiasAddAttrs>();
      const int64_t axis = ba == nullptr ? 1 : (ba->axis < 0 ? ba->axis + 4 : ba->axis);
      const TensorTypeNode* bt = TT(c->args[1]);
      if (axis == 1 && bt != nullptr && bt->ndim() == 1 && out_t->shape[1].is_static() &&
          bt->shape[0] == out_t->shape[1]) {
        const LState st = *s0;
        KILN_ASSIGN_OR_RETURN(Expr b, Restore(c->args[1]));
        KILN_ASSIGN_OR_RETURN(b, ChannelVector(b, out_t->shape[1].value(), st));
        KILN_ASSIGN_OR_RETURN(Op add, GetOp("add"));
        KILN_ASSIGN_OR_RETURN(Call nc, MakeCall(add, {Post(c->args[0]), b}));
        states_[pre.get()] = st;
        return Expr(nc);
      }
    }
    if (op->def->pattern == OpPattern::kBroadcast && c->args.size() == 2 &&
        op->name() != "nn.bias_add" && op->name() != "nn.prelu" && out_t != nullptr) {
      const LState* s1 = StateOf(c->args[1]);
      if (s0 == nullptr && s1 == nullptr) return post;
      const size_t t = s0 != nullptr ? 0 : 1;
      const LState st = *(t == 0 ? s0 : s1);
      const Expr& other = c->args[1 - t];
      const TensorTypeNode* ot = TT(other);
      const LState* so = StateOf(other);
      std::vector<Expr> args(2);
      args[t] = Post(c->args[t]);
      if (so != nullptr && *so == st) {
        args[1 - t] = Post(other);
      } else if (ot != nullptr && ot->ndim() == 0) {
        args[1 - t] = Post(other);
      } else if (ot != nullptr && ot->shape == out_t->shape && ot->dtype == out_t->dtype &&
                 st.channels == 0) {
        KILN_ASSIGN_OR_RETURN(Expr r, Restore(other));
        KILN_ASSIGN_OR_RETURN(args[1 - t], Transform(r, st.orig, st.cur));
      } else if (ot != nullptr && st.orig == "NCHW" && out_t->ndim() == 4 &&
                 IsChannelVector(*ot, out_t->shape[1])) {
        // A per-channel operand ([C, 1, 1] or [1, C, 1, 1]: batch-norm's
        // scale and shift, a bias) follows the blocked layout.
        KILN_ASSIGN_OR_RETURN(Expr r, Restore(other));
        KILN_ASSIGN_OR_RETURN(args[1 - t], ChannelVector(r, out_t->shape[1].value(), st));
      } else {
        return Generic(pre, std::move(post));
      }
      KILN_ASSIGN_OR_RETURN(Call nc, MakeCall(c->op, std::move(args), c->attrs));
      states_[pre.get()] = st;
      return Expr(nc);
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

  absl::StatusOr<Expr> Transform(const Expr& x, const std::string& src, const std::string& dst) {
    auto key = std::make_tuple(x.get(), src, dst);
    if (auto it = transforms_.find(key); it != transforms_.end()) return it->second;
    KILN_ASSIGN_OR_RETURN(Expr r, LayoutTransform(x, src, dst));
    transforms_[key] = r;
    return r;
  }

  // A pool (A: its attrs) of a blocked input runs in the blocked layout (the
  // pools' relation and kernels accept NCHW{c}c); nullopt when it cannot.
  template <typename A>
  absl::StatusOr<std::optional<Expr>> BlockedPool(const Expr& pre, const CallNode* c,
                                                  const LState& in) {
    const auto* pa = c->attrs.as<A>();
    if (in.orig != "NCHW" || pa == nullptr || pa->layout != "NCHW" ||
        !(pa->out_layout.empty() || pa->out_layout == "NCHW"))
      return std::optional<Expr>();
    const LState st = in;  // copy: inserting may rehash the map
    Ref<AttrsNode> cloned = c->attrs->Clone();
    auto* na = static_cast<A*>(cloned.get());
    na->layout = st.cur;
    na->out_layout = st.cur;
    KILN_ASSIGN_OR_RETURN(Call nc, MakeCall(c->op, {Post(c->args[0])}, cloned));
    states_[pre.get()] = st;
    return std::optional<Expr>(Expr(nc));
  }

  // [C, 1, 1] or [1, C, 1, 1] with C static and equal to `channels`.
  static bool IsChannelVector(const TensorTypeNode& t, const Dim& channels) {
    if (!channels.is_static()) return false;
    if (t.ndim() == 3) {
      return t.shape[0] == channels && t.shape[1] == Dim(1) && t.shape[2] == Dim(1);
    }
    if (t.ndim() == 4) {
      return t.shape[0] == Dim(1) && t.shape[1] == channels && t.shape[2] == Dim(1) &&
             t.shape[3] == Dim(1);
    }
    return false;
  }

  // `v` (C elements as [C], [C, 1, 1] or [1, C, 1, 1]) as a [1, C, 1, 1]
  // tensor in the state's layout (NCHW{c}c): [1, C/c, 1, 1, c], zero-padded
  // first when the state's channels are. FoldConstant folds it when `v` is a
  // constant.
  absl::StatusOr<Expr> ChannelVector(const Expr& v, int64_t channels, const LState& st) {
    const std::string& layout = st.cur;
    const TensorTypeNode* vt = TT(v);
    Expr r = v;
    if (vt == nullptr || vt->ndim() != 4) {
      auto* attrs = new ReshapeAttrs();
      attrs->newshape = {1, channels, 1, 1};
      KILN_ASSIGN_OR_RETURN(Op reshape, GetOp("reshape"));
      KILN_ASSIGN_OR_RETURN(Call rc, MakeCall(reshape, {v}, Ref<AttrsNode>(attrs)));
      r = rc;
    }
    if (st.channels > 0) {
      // The state's channels fill whole blocks of its layout (NCHW{b}c).
      int64_t block = 0;
      for (char ch : layout) {
        if (ch >= '0' && ch <= '9') block = block * 10 + (ch - '0');
      }
      if (block <= 0) return absl::InternalError(absl::StrCat("no channel block in ", layout));
      KILN_ASSIGN_OR_RETURN(r, PadAxis(r, 4, 1, channels, (channels + block - 1) / block * block));
    }
    return LayoutTransform(r, "NCHW", layout);
  }

  absl::StatusOr<Expr> Generic(const Expr& pre, Expr post) {
    bool any = false;
    ForEachChild(pre, [&](const Expr& c) { any |= StateOf(c) != nullptr; });
    if (!any) return post;
    std::vector<Expr> kids = Children(pre);
    for (Expr& k : kids) {
      KILN_ASSIGN_OR_RETURN(k, Restore(k));
    }
    return WithNewChildren(pre, kids);
  }

  absl::StatusOr<Expr> Conv(const Expr& pre, const CallNode* c, Expr post) {
    const auto* a = c->attrs.as<Conv2DAttrs>();
    const TensorTypeNode* dt = TT(c->args[0]);
    const TensorTypeNode* ot = TT(pre);
    if (a->data_layout != "NCHW" || a->kernel_layout != "OIHW" ||
        !(a->out_layout.empty() || a->out_layout == "NCHW") || dt == nullptr ||
        ot == nullptr || dt->ndim() != 4 || ot->ndim() != 4) {
      return Generic(pre, std::move(post));
    }
    // Depthwise (one filter per channel, MobileNet's 3x3s): channels blocked
    // alike in data, weight (OIHW1i{c}o) and output.
    const TensorTypeNode* wt = TT(c->args[1]);
    // Zero channels and merged groups are float32 constants (PadAxis's pad
    // value, MergeGroups' mask): only for float32 data and weight.
    const bool f32 = dt->dtype == DataType::Float(32) && wt != nullptr &&
                     wt->dtype == DataType::Float(32);
    const bool depthwise = a->groups > 1 && dt->shape[1].is_static() &&
                           dt->shape[1].value() == a->groups && ot->shape[1] == dt->shape[1] &&
                           wt != nullptr && wt->ndim() == 4 && wt->shape[1] == Dim(1);
    if (a->groups != 1 && !depthwise) {
      return f32 ? Grouped(pre, c, std::move(post)) : Generic(pre, std::move(post));
    }
    if (depthwise) {
      // Narrow channels padded (zero filters on zero channels): one group
      // per padded channel.
      const int64_t cp = f32 ? NarrowPaddedChannels(dt->shape[1]) : 0;
      const int64_t cb = cp > 0 ? (cp % 16 == 0 ? 16 : 8) : BlockFactor(dt->shape[1]);
      if (cb == 0) return Generic(pre, std::move(post));
      BlockOptions o;
      o.depthwise = true;
      o.data_channels = cp;
      o.out_channels = cp;
      o.groups = cp;
      return Blocked(pre, c, absl::StrCat("NCHW", cb, "c"), absl::StrCat("OIHW1i", cb, "o"),
                     absl::StrCat("NCHW", cb, "c"), o);
    }
    BlockOptions o;
    int64_t ic = BlockFactor(dt->shape[1]);
    if (const int64_t p = f32 ? NarrowPaddedChannels(dt->shape[1]) : 0; p > 0) {
      o.data_channels = p;
      ic = p % 16 == 0 ? 16 : 8;
    }
    // A few input channels that no power of two divides (an RGB stem): one
    // block of all of them (NCHW3c), so the convolution still runs blocked.
    if (ic == 0 && dt->shape[1].is_static() && dt->shape[1].value() <= 16) {
      ic = dt->shape[1].value();
    }
    int64_t oc = BlockFactor(ot->shape[1]);
    if (const int64_t p = PaddedChannels(ot->shape[1]); p > 0) {
      o.out_channels = p;
      oc = kPadBlock;
    } else if (const int64_t q = f32 ? NarrowPaddedChannels(ot->shape[1]) : 0; q > 0) {
      o.out_channels = q;
      oc = q % 16 == 0 ? 16 : 8;
    }
    if (ic == 0 || oc == 0) return Generic(pre, std::move(post));
    return Blocked(pre, c, absl::StrCat("NCHW", ic, "c"), absl::StrCat("OIHW", ic, "i", oc, "o"),
                   absl::StrCat("NCHW", oc, "c"), o);
  }

  // A grouped convolution that is not depthwise (ResNeXt's, RegNet's):
  // blocked like a dense one, with each output block inside one group, so
  // a block reads only its group's input blocks. Where a group has fewer
  // output channels than the block (ResNeXt's first stage: 4 per group),
  // `merge` = ob / ocg neighbouring groups become one whose weight is
  // block-diagonal (zeros between the merged groups): `merge` times the
  // multiply-adds, all on full vectors, instead of the unblocked kernel.
  // The output block is the one of 16 and 8 that merges fewer groups.
  absl::StatusOr<Expr> Grouped(const Expr& pre, const CallNode* c, Expr post) {
    const auto* a = c->attrs.as<Conv2DAttrs>();
    const TensorTypeNode* dt = TT(c->args[0]);
    const TensorTypeNode* ot = TT(pre);
    const TensorTypeNode* wt = TT(c->args[1]);
    if (wt == nullptr || wt->ndim() != 4 || !dt->shape[1].is_static() ||
        !ot->shape[1].is_static() || a->groups < 2) {
      return Generic(pre, std::move(post));
    }
    for (const Dim& d : wt->shape) {
      if (!d.is_static()) return Generic(pre, std::move(post));
    }
    const int64_t g = a->groups, cin = dt->shape[1].value(), cout = ot->shape[1].value();
    if (cin % g != 0 || cout % g != 0) return Generic(pre, std::move(post));
    const int64_t icg = cin / g, ocg = cout / g;
    int64_t ob = 0, merge = 0;
    for (int64_t f : {16, 8}) {
      if (cout % f != 0) continue;
      const int64_t m = ocg % f == 0 ? 1 : (f % ocg == 0 ? f / ocg : 0);
      if (m != 0 && (merge == 0 || m < merge)) {
        ob = f;
        merge = m;
      }
    }
    // More than 4x the work on zeros is not worth the vectors.
    if (ob == 0 || merge > 4) return Generic(pre, std::move(post));
    const int64_t ib = BlockFactor(Dim(icg * merge));
    if (ib == 0) return Generic(pre, std::move(post));
    KILN_ASSIGN_OR_RETURN(Expr w, Restore(c->args[1]));
    if (merge > 1) {
      KILN_ASSIGN_OR_RETURN(w, MergeGroups(w, g / merge, merge, ocg, icg, wt->shape[2].value(),
                                           wt->shape[3].value()));
    }
    BlockOptions o;
    o.weight = w;
    o.groups = g / merge;
    return Blocked(pre, c, absl::StrCat("NCHW", ib, "c"), absl::StrCat("OIHW", ib, "i", ob, "o"),
                   absl::StrCat("NCHW", ob, "c"), o);
  }

  // The OIHW weight [G * M * O, I, KH, KW] of G * M groups (O output and I
  // input channels each) as that of G groups of M * O output and M * I input
  // channels: [G, M, O, 1, I, KH, KW] times the mask [1, M, 1, M, 1, 1, 1]
  // (1 on the diagonal), reshaped to [G * M * O, M * I, KH, KW].
  static absl::StatusOr<Expr> MergeGroups(const Expr& w, int64_t groups, int64_t merge,
                                          int64_t ocg, int64_t icg, int64_t kh, int64_t kw) {
    KILN_ASSIGN_OR_RETURN(Op reshape, GetOp("reshape"));
    KILN_ASSIGN_OR_RETURN(Op multiply, GetOp("multiply"));
    auto* split = new ReshapeAttrs();
    split->newshape = {groups, merge, ocg, 1, icg, kh, kw};
    KILN_ASSIGN_OR_RETURN(Call ws, MakeCall(reshape, {w}, Ref<AttrsNode>(split)));
    KILN_ASSIGN_OR_RETURN(Ref<HostTensor> mask,
                          HostTensor::Create(DataType::Float(32), {1, merge, 1, merge, 1, 1, 1}));
    float* m = mask->mutable_data<float>();
    for (int64_t i = 0; i < merge; ++i) {
      for (int64_t j = 0; j < merge; ++j) m[i * merge + j] = i == j ? 1.0f : 0.0f;
    }
    KILN_ASSIGN_OR_RETURN(Constant mc, MakeConstant(mask, "group_mask"));
    KILN_ASSIGN_OR_RETURN(Call masked, MakeCall(multiply, {Expr(ws), Expr(mc)}));
    auto* join = new ReshapeAttrs();
    join->newshape = {groups * merge * ocg, merge * icg, kh, kw};
    KILN_ASSIGN_OR_RETURN(Call r, MakeCall(reshape, {Expr(masked)}, Ref<AttrsNode>(join)));
    return Expr(r);
  }

  // The convolution `c` rewritten to the given blocked layouts.
  absl::StatusOr<Expr> Blocked(const Expr& pre, const CallNode* c, const std::string& in_layout,
                               const std::string& kernel_layout, const std::string& out_layout,
                               const BlockOptions& o = BlockOptions()) {
    Expr data;
    if (const LState* s = StateOf(c->args[0]);
        o.data_channels == 0 && s != nullptr && s->cur == in_layout && s->channels == 0) {
      data = Post(c->args[0]);
    } else {
      KILN_ASSIGN_OR_RETURN(Expr r, Restore(c->args[0]));
      if (o.data_channels > 0) {
        KILN_ASSIGN_OR_RETURN(
            r, PadAxis(r, 4, 1, TT(c->args[0])->shape[1].value(), o.data_channels));
      }
      KILN_ASSIGN_OR_RETURN(data, Transform(r, "NCHW", in_layout));
    }
    Expr w;
    if (o.weight) {
      w = *o.weight;
    } else {
      KILN_ASSIGN_OR_RETURN(w, Restore(c->args[1]));
    }
    Ref<AttrsNode> cloned = c->attrs->Clone();
    auto* na = static_cast<Conv2DAttrs*>(cloned.get());
    if (o.groups > 0) na->groups = o.groups;
    int64_t true_channels = 0;
    if (o.out_channels > 0) {
      true_channels = TT(pre)->shape[1].value();
      KILN_ASSIGN_OR_RETURN(w, PadAxis(w, 4, 0, true_channels, o.out_channels));
      if (na->channels) na->channels = o.out_channels;
    }
    if (o.data_channels > 0 && !o.depthwise) {
      KILN_ASSIGN_OR_RETURN(
          w, PadAxis(w, 4, 1, TT(c->args[0])->shape[1].value(), o.data_channels));
    }
    KILN_ASSIGN_OR_RETURN(w, Transform(w, "OIHW", kernel_layout));
    na->data_layout = in_layout;
    na->kernel_layout = kernel_layout;
    na->out_layout = out_layout;
    states_[pre.get()] = LState{"NCHW", out_layout, true_channels};
    const auto [chunk, blocks] = InputBlockChunk(*na, TT(c->args[1]), TT(pre), o);
    if (chunk == 0) {
      KILN_ASSIGN_OR_RETURN(Call nc, MakeCall(c->op, {data, w}, cloned));
      return Expr(nc);
    }
    // The sum over the `blocks` input blocks in chunks of `chunk`: one conv
    // per chunk, each added to the sum of those before it (a fused epilogue).
    Expr sum;
    for (int64_t b = 0; b < blocks; b += chunk) {
      KILN_ASSIGN_OR_RETURN(Expr xd, SliceAxis1(data, b, b + chunk));
      KILN_ASSIGN_OR_RETURN(Expr wd, SliceAxis1(w, b, b + chunk));
      KILN_ASSIGN_OR_RETURN(Call part, MakeCall(c->op, {xd, wd}, cloned));
      if (!sum) {
        sum = part;
        continue;
      }
      KILN_ASSIGN_OR_RETURN(sum, CallOpNamed("add", {Expr(part), sum}));
    }
    return sum;
  }

  // The block size of a layout "NCHW{b}c".
  static int64_t BlockOf(const std::string& layout) {
    int64_t b = 0;
    if (layout.size() < 6 || !absl::SimpleAtoi(layout.substr(4, layout.size() - 5), &b)) return 1;
    return b;
  }

  static absl::StatusOr<Expr> SliceAxis1(const Expr& x, int64_t begin, int64_t end) {
    return CallOpNamed("strided_slice", {x}, MakeAttrs<StridedSliceAttrs>([&](StridedSliceAttrs& a) {
                         a.begin = {begin};
                         a.end = {end};
                         a.axes = std::vector<int64_t>{1};
                       }));
  }

  // A dilated convolution (no Winograd, no GEMM: the direct NCHW{c}c
  // kernel) whose weight for one output block outgrows the L2 cache: each
  // register tile then streams that block's weight (and the padded input)
  // from L3. DeepLabV3's ASPP conv (960 input channels, 3x3, dilation 12)
  // on a 32x32 map: 26 GFLOP/s with all 960 channels, 32 with 480, 58 with
  // 240 (one conv, 1 thread, AVX2). Such a conv runs as a sum of convs over
  // chunks of input blocks whose weight per output block stays under
  // kChunkWeightBytes: {input blocks per chunk (a divisor of the block
  // count), input blocks}, or {0, 0} to keep one conv. Small outputs (under
  // 256 pixels) reuse a weight too few times for the split to pay.
  static std::pair<int64_t, int64_t> InputBlockChunk(const Conv2DAttrs& a,
                                                     const TensorTypeNode* wt,
                                                     const TensorTypeNode* ot,
                                                     const BlockOptions& o) {
    constexpr int64_t kChunkWeightBytes = 160 * 1024;
    const std::pair<int64_t, int64_t> one = {0, 0};
    if (a.groups != 1 || o.depthwise || wt == nullptr || ot == nullptr || wt->ndim() != 4 ||
        ot->ndim() != 4 || a.dilation.size() != 2 || (a.dilation[0] == 1 && a.dilation[1] == 1) ||
        wt->dtype != DataType::Float(32)) {
      return one;
    }
    for (const Dim& d : wt->shape) {
      if (!d.is_static()) return one;
    }
    if (!ot->shape[2].is_static() || !ot->shape[3].is_static() ||
        ot->shape[2].value() * ot->shape[3].value() < 256) {
      return one;
    }
    const int64_t ib = BlockOf(a.data_layout), ob = BlockOf(a.out_layout);
    const int64_t ic = o.data_channels > 0 ? o.data_channels : wt->shape[1].value();
    if (ic % ib != 0) return one;
    const int64_t blocks = ic / ib;
    const int64_t block_bytes = ob * ib * wt->shape[2].value() * wt->shape[3].value() * 4;
    if (blocks * block_bytes <= kChunkWeightBytes) return one;
    for (int64_t chunk = kChunkWeightBytes / block_bytes; chunk >= 1; --chunk) {
      if (blocks % chunk == 0) return {chunk, blocks};
    }
    return one;
  }

  absl::flat_hash_map<const ExprNode*, LState> states_;
  absl::flat_hash_map<const ExprNode*, Expr> restored_;
  absl::flat_hash_map<std::tuple<const ExprNode*, std::string, std::string>, Expr> transforms_;
};

bool ProbeBlockedConv() {
  auto conv = GetOp("nn.conv2d");
  if (!conv.ok()) return false;
  Var x = MakeVar("x", MakeTensorType(ShapeFromInts({1, 1, 4, 4, 16}), DataType::Float(32)));
  Var w = MakeVar("w", MakeTensorType(ShapeFromInts({1, 1, 3, 3, 16, 16}), DataType::Float(32)));
  auto* a = new Conv2DAttrs();
  a->padding = {1, 1};
  a->data_layout = "NCHW16c";
  a->kernel_layout = "OIHW16i16o";
  a->out_layout = "NCHW16c";
  auto call = MakeCall(*conv, {x, w}, Ref<AttrsNode>(a));
  if (!call.ok()) return false;
  auto t = types::InferExprType(*call);
  if (!t.ok()) return false;
  const auto* tt = t->as<TensorTypeNode>();
  return tt != nullptr && tt->shape == ShapeFromInts({1, 1, 4, 4, 16});
}

// nn.matmul(x, W) without transposes, W a constant [K, N]: nn.dense(x,
// transpose(W)) (the transpose folded by FoldConstant); nn.matmul(x, W) with
// transpose_b: nn.dense(x, W). The same product, both operands k-major.
class MatmulToDense : public TypedRewriter {
 protected:
  absl::StatusOr<Expr> Transform(const Expr&, Expr post) override {
    const CallNode* c = AsOpCall(post, "nn.matmul");
    if (c == nullptr || c->args.size() != 2) return post;
    const auto* a = c->attrs.as<MatmulAttrs>();
    TensorType w = TensorTypeOf(c->args[1]);
    if (a == nullptr || a->transpose_a || !w || w->ndim() != 2) return post;
    Expr weight = c->args[1];
    if (!a->transpose_b) {
      if (c->args[1].as<ConstantNode>() == nullptr) return post;
      auto ta = MakeRef<TransposeAttrs>();
      const_cast<TransposeAttrs*>(ta.get())->axes = std::vector<int64_t>{1, 0};
      KILN_ASSIGN_OR_RETURN(weight, CallOpNamed("transpose", {weight}, Attrs(ta)));
    }
    auto da = MakeRef<DenseAttrs>();
    const_cast<DenseAttrs*>(da.get())->units = a->units;
    const_cast<DenseAttrs*>(da.get())->out_dtype = a->out_dtype;
    return CallOpNamed("nn.dense", {c->args[0], weight}, Attrs(da));
  }
};

}  // namespace

bool BlockedConvTypeSupported() {
  static const bool supported = ProbeBlockedConv();
  return supported;
}

absl::StatusOr<Function> AlterOpLayoutFunction(const Function& f,
                                               const AlterOpLayoutOptions& options) {
  if (IsSealed(f)) return f;
  if (options.target.rfind("cuda", 0) == 0) {
    MatmulToDense r;
    KILN_ASSIGN_OR_RETURN(Expr body, r.Rewrite(f->body));
    if (body.get() == f->body.get()) return f;
    return MakeFunction(f->params, body, f->ret_type, f->type_params, f->attrs);
  }
  if (options.target.rfind("llvm", 0) != 0) return f;
  if (options.require_type_support && !BlockedConvTypeSupported()) return f;
  Blocker b;
  KILN_RETURN_IF_ERROR(b.Rewrite(f->body).status());
  KILN_ASSIGN_OR_RETURN(Expr body, b.Restore(f->body));
  if (body == f->body) return f;
  return MakeFunction(f->params, body, f->ret_type, f->type_params, f->attrs);
}

PassPtr AlterOpLayout() {
  return MakeFunctionPass(
      PassInfo{"AlterOpLayout", 3, {"InferType"}},
      [](const Function& f, const Module&, const PassContext& ctx) -> absl::StatusOr<Function> {
        AlterOpLayoutOptions opts;
        KILN_ASSIGN_OR_RETURN(opts.target,
                              ctx.GetConfig<std::string>("relay.AlterOpLayout.target", "llvm"));
        return AlterOpLayoutFunction(f, opts);
      });
}

}  // namespace kiln::passes
