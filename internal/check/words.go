package check

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
)

// Words the founding checks' messages share across areas.

// PluralS is the "s" of "3 pods": empty for one.
func PluralS(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// NodesRun is "1 AKS node runs" or "3 AKS nodes run"; kind, when set, ends
// in a space ("AKS ").
func NodesRun(n int, kind string) string {
	return Subject(n, kind+"node", kind+"nodes", "runs", "run")
}

// Subject is a count with its noun and the verb that agrees with it:
// "1 node matches", "3 nodes match".
func Subject(n int, one, many, verbOne, verbMany string) string {
	if n == 1 {
		return "1 " + one + " " + verbOne
	}
	return fmt.Sprintf("%d %s %s", n, many, verbMany)
}

// CountsText prints counts by key, largest first: "3 on Ubuntu 20.04, 1 on
// Ubuntu 22.04".
func CountsText(counts map[string]int) string {
	keys := slices.Collect(maps.Keys(counts))
	sort.Slice(keys, func(i, j int) bool {
		if counts[keys[i]] != counts[keys[j]] {
			return counts[keys[i]] > counts[keys[j]]
		}
		return keys[i] < keys[j]
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%d on %s", counts[k], k)
	}
	return strings.Join(parts, ", ")
}

// SpecReplicas is a workload's spec.replicas, or the API default (1) when
// it is unset.
func SpecReplicas(r *int32) int32 {
	if r == nil {
		return 1 // the API default
	}
	return *r
}

// SortedUnique returns the distinct strings of ss, sorted.
func SortedUnique(ss []string) []string {
	return slices.Compact(slices.Sorted(slices.Values(ss)))
}
