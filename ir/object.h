// File: ir/object.h
//
// The reference-counted base of every IR node, and `Ref<T>`, the handle that
// owns one. Nodes are immutable once built and shared freely (a graph is a DAG),
// so ownership is by intrusive reference count.
//
// Releasing the last reference to the head of a 100,000-node chain must not
// recurse 100,000 frames deep. `Object::DecRef` therefore defers destruction:
// the first release on a thread drains a thread-local queue, and releases that
// happen while a node is being destroyed only enqueue. Destruction depth is
// constant, whatever the graph.
//
//   Ref<const VarNode> v = ...;      // like a shared_ptr
//   if (const CallNode* c = e.as<CallNode>()) { ... }   // checked downcast
#ifndef KILN_IR_OBJECT_H_
#define KILN_IR_OBJECT_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <type_traits>
#include <utility>

namespace kiln {

class Object {
 public:
  Object() = default;
  // A copy is a new object: it starts with no references.
  Object(const Object&) : refs_(0) {}
  Object& operator=(const Object&) = delete;
  virtual ~Object() = default;

  void IncRef() const { refs_.fetch_add(1, std::memory_order_relaxed); }
  void DecRef() const {
    if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) DeferredDelete(this);
  }
  int32_t use_count() const { return refs_.load(std::memory_order_relaxed); }

 private:
  static void DeferredDelete(const Object* obj);
  mutable std::atomic<int32_t> refs_{0};
};

// An owning handle to an Object subclass. `T` is usually a const node type.
template <typename T>
class Ref {
 public:
  using element_type = T;

  Ref() = default;
  Ref(std::nullptr_t) {}  // NOLINT: implicit null, as with pointers.
  explicit Ref(T* p) : p_(p) {
    if (p_) p_->IncRef();
  }
  Ref(const Ref& o) : p_(o.p_) {
    if (p_) p_->IncRef();
  }
  Ref(Ref&& o) noexcept : p_(o.p_) { o.p_ = nullptr; }
  template <typename U, typename = std::enable_if_t<std::is_convertible_v<U*, T*>>>
  Ref(const Ref<U>& o) : p_(o.get()) {  // NOLINT: implicit upcast.
    if (p_) p_->IncRef();
  }
  template <typename U, typename = std::enable_if_t<std::is_convertible_v<U*, T*>>>
  Ref(Ref<U>&& o) noexcept : p_(o.release()) {}  // NOLINT: implicit upcast.
  ~Ref() {
    if (p_) p_->DecRef();
  }
  Ref& operator=(Ref o) noexcept {
    std::swap(p_, o.p_);
    return *this;
  }

  T* get() const { return p_; }
  T* operator->() const { return p_; }
  T& operator*() const { return *p_; }
  explicit operator bool() const { return p_ != nullptr; }
  bool defined() const { return p_ != nullptr; }

  // Checked downcast: nullptr when this is null or not a `U`.
  template <typename U>
  const U* as() const {
    return (p_ != nullptr && U::IsInstance(p_)) ? static_cast<const U*>(p_) : nullptr;
  }
  // Downcast to a handle; null when the node is not a `U`.
  template <typename U>
  Ref<const U> cast() const {
    const U* u = as<U>();
    return Ref<const U>(const_cast<U*>(u));
  }

  T* release() {
    T* p = p_;
    p_ = nullptr;
    return p;
  }

  friend bool operator==(const Ref& a, const Ref& b) { return a.p_ == b.p_; }
  friend bool operator==(const Ref& a, std::nullptr_t) { return a.p_ == nullptr; }

 private:
  T* p_ = nullptr;
};

template <typename T, typename... Args>
Ref<const T> MakeRef(Args&&... args) {
  return Ref<const T>(new T(std::forward<Args>(args)...));
}

// Hash and equality by identity, for maps keyed by node.
struct RefHash {
  template <typename T>
  size_t operator()(const Ref<T>& r) const {
    return std::hash<const void*>()(static_cast<const void*>(r.get()));
  }
};

}  // namespace kiln

template <typename T>
struct std::hash<kiln::Ref<T>> {
  size_t operator()(const kiln::Ref<T>& r) const { return kiln::RefHash()(r); }
};

#endif  // KILN_IR_OBJECT_H_
