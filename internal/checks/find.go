package checks

import (
	"sort"
	"strings"

	"github.com/kubegap/kubegap/internal/check"
)

// Find finds a check as the CLI and the MCP server take one: by its ID,
// case-insensitively, or by a prefix only one check ID starts with. When
// the prefix is shared, candidates lists the check IDs that start with
// it, sorted, and ok is false; when nothing matches, both are empty.
func Find(id string) (c check.Check, candidates []string, ok bool) {
	if c, ok := Lookup(id); ok {
		return c, nil, true
	}
	want := strings.ToLower(strings.TrimSpace(id))
	var found []check.Check
	for _, c := range All() {
		if c.ID == want {
			return c, nil, true
		}
		if want != "" && strings.HasPrefix(c.ID, want) {
			found = append(found, c)
		}
	}
	if len(found) == 1 {
		return found[0], nil, true
	}
	for _, c := range found {
		candidates = append(candidates, c.ID)
	}
	sort.Strings(candidates)
	return check.Check{}, candidates, false
}

// Nearest returns up to n of ids closest to id by edit distance (case
// folded), nearest first, for a "did you mean" after an unknown ID: the
// few a typo most likely meant, rather than every ID there is. IDs that
// share nothing with id (a distance as long as both) are left out.
func Nearest(id string, ids []string, n int) []string {
	want := strings.ToLower(strings.TrimSpace(id))
	type scored struct {
		id   string
		dist int
	}
	var all []scored
	for _, c := range ids {
		d := editDistance(want, c)
		// A mistyped prefix ("verison" for version-skew) is as near as
		// its distance to the ID's start of the same length.
		if len(want) < len(c) {
			d = min(d, editDistance(want, c[:len(want)]))
		}
		// A prefix of the ID counts as near whatever its length.
		if strings.HasPrefix(c, want) || strings.Contains(c, want) {
			d = min(d, 1)
		}
		if d >= max(len(want), len(c)) {
			continue
		}
		all = append(all, scored{c, d})
	}
	sort.SliceStable(all, func(i, j int) bool {
		if all[i].dist != all[j].dist {
			return all[i].dist < all[j].dist
		}
		return all[i].id < all[j].id
	})
	var out []string
	for _, s := range all {
		if len(out) == n {
			break
		}
		// Past a third of the typed length it is no longer a typo of it.
		if s.dist > max(2, len(want)/3) {
			break
		}
		out = append(out, s.id)
	}
	return out
}

// editDistance is the Levenshtein distance between a and b, by bytes
// (check IDs are ASCII).
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// DidYouMean is the tail of an unknown-ID error: "; did you mean a, b?"
// with the nearest IDs, or how to list them all when none is near.
func DidYouMean(id string, ids []string, list string) string {
	if near := Nearest(id, ids, 3); len(near) > 0 {
		return "; did you mean " + strings.Join(near, ", ") + "?"
	}
	return "; no check ID is near it (" + list + " lists them)"
}
