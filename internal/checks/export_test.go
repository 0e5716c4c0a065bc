package checks

// BenchIDs lets the external test package's benchmarks register the checks
// they time (benchmarked_test.go).
var BenchIDs = benchIDs
