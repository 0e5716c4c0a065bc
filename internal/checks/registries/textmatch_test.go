package registries

import (
	"regexp"
	"testing"
)

// The fast path answers as the regexp does, and is taken only for a
// case-insensitive ASCII literal whose letters fold within ASCII.
func TestTextMatcherAsRegexp(t *testing.T) {
	patterns := []struct {
		pattern string
		fast    bool
	}{
		{"(?i)pull", true},
		{"(?i)PuLL2", true},
		{"pull", false},                  // case-sensitive: the regexp
		{"(?i)pulls?", false},            // not a literal
		{"(?i)back", false},              // 'k' folds to the Kelvin sign
		{"(?i)pass", false},              // 's' folds to long s
		{"(?i)too many requests", false}, // the space is not a letter
	}
	texts := []string{"", "pull", "PULL", "Failed to pull image", "Pulling", "pul", "p-ull", "pull2", "PULL2x",
		"bac\u212a", "pa\u017fs", "BACK", "pass", "\xffpull\xff", "pü ll", "ppull", "too many requests", "Pul\u212a"}
	for _, p := range patterns {
		re := regexp.MustCompile(p.pattern)
		m := newTextMatcher(re)
		if got := m.foldLit != ""; got != p.fast {
			t.Errorf("%q: fast path %v, want %v", p.pattern, got, p.fast)
		}
		for _, s := range texts {
			if got, want := m.match(s), re.MatchString(s); got != want {
				t.Errorf("%q on %q: %v, the regexp says %v", p.pattern, s, got, want)
			}
		}
	}
}
