package kiln

// ProfileRow is one kernel node, in execution order: name, fused operators,
// time (the median over the profile's repeats) in microseconds.
type ProfileRow struct {
	Name   string
	Op     string
	TimeUS float64
}

// Profile is a per-node profile (kiln_session_profile_with), copied out of
// the C object.
type Profile struct {
	Rows        []ProfileRow
	TotalUS     float64 // the sum of node times, not the run's wall time
	Table       string  // the debug executor's text table
	ChromeTrace string  // trace-event JSON for chrome://tracing, Perfetto
}

// BenchmarkOptions are Session.Benchmark's options (nil: 1 warm-up, 10 runs).
type BenchmarkOptions struct {
	Warmup   int    // untimed runs first (0 means 1)
	Repeat   int    // timed runs (0 means 10)
	Workload string // the log's workload name ("": the artifact's model name)
	Hardware string // the log's hardware string ("": "cpu")
}

// BenchmarkResult is timed runs in milliseconds (population std) and the
// run as one line of TVM's benchmark log format v0.1 (JSON).
type BenchmarkResult struct {
	MeanMS, StdMS, MinMS, MaxMS float64
	Repeat                      int
	LogLine                     string
}
