package kiln

/*
#include <kiln/kiln.h>
*/
import "C"

import (
	"runtime"
	"sync"
)

// ThreadPool is a CPU thread pool sessions share (KilnThreadPool). By
// default every session makes its own; many concurrent sessions should
// share one (docs/c_api.md §7.12). Safe for concurrent use.
type ThreadPool struct {
	mu       sync.Mutex
	raw      *C.KilnThreadPool
	sessions int
	closed   bool
}

// NewThreadPool makes a pool of numThreads threads, counting the caller's
// (0: DefaultNumThreads(); 1: no workers). InvalidArgument outside 0..1024.
func NewThreadPool(numThreads int) (*ThreadPool, error) {
	var out *C.KilnThreadPool
	switch rc := C.kiln_thread_pool_create(C.int32_t(numThreads), &out); rc {
	case 0:
	case -1:
		return nil, errorf(InvalidArgument, "kiln_thread_pool_create(%d): 0..1024 threads", numThreads)
	case -2:
		return nil, errorf(ResourceExhausted, "kiln_thread_pool_create(%d): out of memory", numThreads)
	default:
		return nil, errorf(Internal, "kiln_thread_pool_create(%d) failed with code %d", numThreads, rc)
	}
	p := &ThreadPool{raw: out}
	runtime.SetFinalizer(p, (*ThreadPool).Close)
	return p, nil
}

// DefaultNumThreads is the thread count of a default pool: KILN_NUM_THREADS,
// else the CPUs this process may run on.
func DefaultNumThreads() int { return int(C.kiln_thread_pool_default_num_threads()) }

// NumThreads is the pool's thread count (0 once released).
func (p *ThreadPool) NumThreads() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.raw == nil {
		return 0
	}
	return int(C.kiln_thread_pool_num_threads(p.raw))
}

// Close destroys the pool now, or after the last session using it is
// closed. Idempotent.
func (p *ThreadPool) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	p.releaseIfDone()
	return nil
}

func (p *ThreadPool) borrow() (*C.KilnThreadPool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed || p.raw == nil {
		return nil, errorf(FailedPrecondition, "the thread pool was closed")
	}
	p.sessions++
	return p.raw, nil
}

func (p *ThreadPool) giveBack() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.sessions--
	p.releaseIfDone()
}

func (p *ThreadPool) releaseIfDone() {
	if p.closed && p.sessions == 0 && p.raw != nil {
		C.kiln_thread_pool_destroy(p.raw)
		p.raw = nil
	}
}
