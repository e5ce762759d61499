// File: tests/compiled/jit_runner.cc
#include "tests/compiled/jit_runner.h"

#include <unordered_map>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "codegen_llvm/codegen_llvm.h"
#include "ir/op.h"
#include "ir/status_macros.h"
#include "ir/traversal.h"
#include "passes/infra/pass.h"
#include "passes/pipeline.h"
#include "passes/registry/register_passes.h"
#include "types/infer_type.h"

namespace kiln::testing {

struct JitGraph::Impl {
  std::unique_ptr<codegen::JitModule> jit;
  // Primitive function node -> (kernel index, entry point).
  std::unordered_map<const ExprNode*, std::pair<size_t, KilnKernelFn>> kernel_of;
  // The constants each call of a primitive function passes (LoweredModule::ConstantsOf).
  std::unordered_map<const ExprNode*, std::vector<Ref<const HostTensor>>> constants_of;
  Function main;
};

JitGraph::~JitGraph() = default;

namespace {

DLTensor ToDL(const HostTensor& t) {
  DLTensor d{};
  d.data = const_cast<void*>(t.raw_data());
  d.device = DLDevice{kDLCPU, 0};
  d.ndim = t.ndim();
  d.dtype = DLDataType{static_cast<uint8_t>(t.dtype().code()), static_cast<uint8_t>(t.dtype().bits()),
                       static_cast<uint16_t>(t.dtype().lanes())};
  d.shape = const_cast<int64_t*>(t.shape().data());
  d.strides = nullptr;
  d.byte_offset = 0;
  return d;
}

absl::Status FlattenType(const Type& t, std::vector<const TensorTypeNode*>* out) {
  if (const auto* tt = t.as<TensorTypeNode>()) {
    out->push_back(tt);
    return absl::OkStatus();
  }
  if (const auto* tup = t.as<TupleTypeNode>()) {
    for (const Type& f : tup->fields) KILN_RETURN_IF_ERROR(FlattenType(f, out));
    return absl::OkStatus();
  }
  return absl::UnimplementedError("jit runner: only tensors and tuples of tensors");
}

void FlattenValue(const interp::Value& v, std::vector<Ref<const HostTensor>>* out) {
  if (v.kind() == interp::ValueKind::kTensor) {
    out->push_back(v.tensor());
    return;
  }
  for (const interp::Value& f : v.fields()) FlattenValue(f, out);
}

// Rebuilds a value of type `t` from flat tensors starting at *pos.
interp::Value Unflatten(const Type& t, const std::vector<Ref<const HostTensor>>& flat, size_t* pos) {
  if (const auto* tup = t.as<TupleTypeNode>()) {
    std::vector<interp::Value> fields;
    for (const Type& f : tup->fields) fields.push_back(Unflatten(f, flat, pos));
    return interp::Value::Tuple(std::move(fields));
  }
  return interp::Value::Tensor(flat[(*pos)++]);
}

}  // namespace

absl::StatusOr<std::unique_ptr<JitGraph>> JitGraph::Compile(const Module& module,
                                                            const JitOptions& options) {
  passes::RegisterAllPasses();
  std::unique_ptr<JitGraph> g(new JitGraph());
  g->impl_ = std::make_unique<Impl>();
  Module m = module;
  absl::Time t0 = absl::Now();
  KILN_ASSIGN_OR_RETURN(passes::PassPtr pipeline, passes::DefaultPipeline(options.opt_level));
  passes::PassContext ctx;
  ctx.opt_level = options.opt_level;
  ctx.required_passes.insert("FuseOps");
  ctx.required_passes.insert("InferType");
  if (options.max_fuse_depth > 0) {
    ctx.SetConfig("relay.FuseOps.max_depth", static_cast<int64_t>(options.max_fuse_depth));
  }
  KILN_RETURN_IF_ERROR(pipeline->Run(&m, ctx).status());
  KILN_ASSIGN_OR_RETURN(m, types::InferType(m));
  g->optimized_ = m;
  absl::Time t1 = absl::Now();
  g->stats_.passes_ms = absl::ToDoubleMilliseconds(t1 - t0);
  KILN_ASSIGN_OR_RETURN(g->impl_->main, m.Lookup("main"));

  KILN_ASSIGN_OR_RETURN(codegen::Target target, codegen::ParseTarget(options.target));
  lowering::LowerOptions lower = options.lower;
  if (lower.vector_lanes <= 0) {
    KILN_ASSIGN_OR_RETURN(int bits, codegen::VectorRegisterBits(target));
    lower.vector_lanes = bits / 32;
  }
  if (!lower.target) {
    KILN_ASSIGN_OR_RETURN(lowering::CpuTarget cpu, codegen::DescribeCpu(target));
    cpu.vector_bits = lower.vector_lanes * 32;
    lower.target = cpu;
  }
  KILN_ASSIGN_OR_RETURN(lowering::LoweredModule lm, lowering::LowerModule(m, lower));
  std::vector<tir::PrimFunc> funcs;
  for (const auto& k : lm.kernels) funcs.push_back(k.func);
  for (const auto& [fn, index] : lm.kernel_of) {
    g->impl_->kernel_of[fn] = {index, nullptr};
    g->impl_->constants_of[fn] = lm.ConstantsOf(fn);
  }
  g->kernels_ = std::move(lm.kernels);
  absl::Time t2 = absl::Now();
  g->stats_.lower_ms = absl::ToDoubleMilliseconds(t2 - t1);
  g->stats_.num_kernels = static_cast<int>(funcs.size());
  KILN_ASSIGN_OR_RETURN(g->impl_->jit, codegen::JitModule::Create(funcs, target));
  for (auto& [fn, entry] : g->impl_->kernel_of) {
    KILN_ASSIGN_OR_RETURN(entry.second, g->impl_->jit->Lookup(g->kernels_[entry.first].func->name));
  }
  // ORC compiles on first lookup: the codegen time includes the lookups.
  g->stats_.codegen_ms = absl::ToDoubleMilliseconds(absl::Now() - t2);
  return g;
}

absl::StatusOr<interp::Value> JitGraph::Run(const std::vector<interp::Value>& args,
                                            KilnKernelContext* ctx) const {
  const Function& main = impl_->main;
  if (args.size() != main->params.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("main takes ", main->params.size(), " arguments, got ", args.size()));
  }
  std::unordered_map<const ExprNode*, std::vector<Ref<const HostTensor>>> values;
  for (size_t i = 0; i < args.size(); ++i) FlattenValue(args[i], &values[main->params[i].get()]);

  for (const Expr& n : PostOrder(main->body, /*enter_functions=*/false)) {
    if (values.count(n.get())) continue;
    std::vector<Ref<const HostTensor>> out;
    if (const auto* c = n.as<ConstantNode>()) {
      out.push_back(c->data);
    } else if (const auto* tup = n.as<TupleNode>()) {
      for (const Expr& f : tup->fields) {
        const auto& v = values[f.get()];
        out.insert(out.end(), v.begin(), v.end());
      }
    } else if (const auto* get = n.as<TupleGetItemNode>()) {
      const auto* tt = get->tuple->checked_type().as<TupleTypeNode>();
      if (tt == nullptr) return absl::InternalError("jit runner: untyped tuple projection");
      size_t begin = 0;
      for (int i = 0; i < get->index; ++i) {
        std::vector<const TensorTypeNode*> flat;
        KILN_RETURN_IF_ERROR(FlattenType(tt->fields[i], &flat));
        begin += flat.size();
      }
      std::vector<const TensorTypeNode*> flat;
      KILN_RETURN_IF_ERROR(FlattenType(tt->fields[get->index], &flat));
      const auto& v = values[get->tuple.get()];
      out.assign(v.begin() + begin, v.begin() + begin + flat.size());
    } else if (const auto* call = n.as<CallNode>()) {
      auto it = impl_->kernel_of.find(call->op.get());
      if (it == impl_->kernel_of.end()) {
        return absl::UnimplementedError("jit runner: main calls something that is not a kernel");
      }
      const lowering::LoweredFunc& k = kernels_[it->second.first];
      std::vector<Ref<const HostTensor>> inputs;
      for (const Expr& a : call->args) {
        const auto& v = values[a.get()];
        inputs.insert(inputs.end(), v.begin(), v.end());
      }
      for (const auto& c : impl_->constants_of.at(call->op.get())) inputs.push_back(c);
      std::vector<const TensorTypeNode*> out_types;
      KILN_RETURN_IF_ERROR(FlattenType(call->checked_type(), &out_types));
      std::vector<Ref<HostTensor>> outputs;
      for (const TensorTypeNode* tt : out_types) {
        std::vector<int64_t> shape;
        for (const Dim& d : tt->shape) {
          if (!d.is_static()) return absl::UnimplementedError("jit runner: symbolic output shape");
          shape.push_back(d.value());
        }
        KILN_ASSIGN_OR_RETURN(Ref<HostTensor> t, HostTensor::Create(tt->dtype, shape));
        outputs.push_back(t);
      }
      std::vector<DLTensor> dl;
      for (const auto& t : inputs) dl.push_back(ToDL(*t));
      for (const auto& t : outputs) dl.push_back(ToDL(*t));
      std::vector<DLTensor*> ptrs;
      for (DLTensor& d : dl) ptrs.push_back(&d);
      int32_t rc = it->second.second(ptrs.data(), static_cast<int32_t>(ptrs.size()), ctx);
      if (rc != 0) {
        return absl::InternalError(absl::StrCat("kernel ", k.func->name, " failed (", rc, "): ",
                                                ctx ? "" : kiln_kernel_last_error()));
      }
      for (auto& t : outputs) out.push_back(t);
    } else if (n.as<FunctionNode>() != nullptr || n.as<OpNode>() != nullptr) {
      continue;
    } else if (n.as<VarNode>() != nullptr) {
      return absl::InvalidArgumentError("jit runner: free variable in main");
    } else {
      return absl::UnimplementedError("jit runner: main must be a dataflow graph of kernel calls");
    }
    values[n.get()] = std::move(out);
  }
  const auto& result = values[main->body.get()];
  size_t pos = 0;
  return Unflatten(main->body->checked_type(), result, &pos);
}

}  // namespace kiln::testing
