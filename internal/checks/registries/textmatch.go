package registries

import (
	"regexp"
	"regexp/syntax"
	"unicode"
)

// textMatcher answers regexp.MatchString for one pattern, with a fast
// path for a pattern that is a case-insensitive ASCII word, such as
// pull-rate-limit.yaml's "(?i)pull": every Warning event about a pod is
// tested against it, and the regexp engine costs about ten times a byte
// scan there.
type textMatcher struct {
	re *regexp.Regexp
	// foldLit is the pattern's literal, lowercase, when the pattern is
	// (?i) and a literal of ASCII letters and digits none of which folds
	// to a non-ASCII rune; "" otherwise.
	foldLit string
}

func newTextMatcher(re *regexp.Regexp) textMatcher {
	m := textMatcher{re: re}
	parsed, err := syntax.Parse(re.String(), syntax.Perl)
	if err != nil || parsed.Op != syntax.OpLiteral || parsed.Flags&syntax.FoldCase == 0 || len(parsed.Rune) == 0 {
		return m
	}
	lit := make([]byte, 0, len(parsed.Rune))
	for _, r := range parsed.Rune {
		if !asciiFoldsOnly(r) {
			return m
		}
		lit = append(lit, byte(unicode.ToLower(r)))
	}
	m.foldLit = string(lit)
	return m
}

// asciiFoldsOnly reports whether r is an ASCII letter or digit whose
// case-folding orbit (unicode.SimpleFold, which (?i) follows) holds only
// ASCII runes: 'k' and 's' do not ('K' Kelvin sign, 'ſ' long s).
func asciiFoldsOnly(r rune) bool {
	if !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9') {
		return false
	}
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		if f > unicode.MaxASCII {
			return false
		}
	}
	return true
}

func (m textMatcher) match(s string) bool {
	if m.foldLit == "" {
		return m.re.MatchString(s)
	}
	return containsFoldASCII(s, m.foldLit)
}

// containsFoldASCII reports whether s holds lit (ASCII letters and digits,
// lowercase) in any case. A byte of a multi-byte UTF-8 sequence is never
// ASCII, so it matches no byte of lit, as its rune matches no rune of the
// pattern.
func containsFoldASCII(s, lit string) bool {
	n := len(lit)
	for i := 0; i+n <= len(s); i++ {
		j := 0
		for ; j < n; j++ {
			c := s[i+j]
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			if c != lit[j] {
				break
			}
		}
		if j == n {
			return true
		}
	}
	return false
}
