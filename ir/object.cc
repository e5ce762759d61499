#include "ir/object.h"

#include <vector>

namespace kiln {
namespace {

struct DeleteQueue {
  std::vector<const Object*> pending;
  bool draining = false;
};

DeleteQueue& Queue() {
  thread_local DeleteQueue queue;
  return queue;
}

}  // namespace

void Object::DeferredDelete(const Object* obj) {
  DeleteQueue& q = Queue();
  if (q.draining) {
    q.pending.push_back(obj);
    return;
  }
  q.draining = true;
  delete obj;
  while (!q.pending.empty()) {
    const Object* next = q.pending.back();
    q.pending.pop_back();
    delete next;
  }
  q.draining = false;
}

}  // namespace kiln
