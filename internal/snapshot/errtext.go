package snapshot

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Error messages quote what a file holds (a bad separator line, an anchor
// name, a timestamp, a key), and a file can hold a 1 MB line or terminal
// escapes. Quoted content is cut to maxQuoted bytes and the whole message
// to maxMessage, each cut saying how long the original was, and what is
// not printable is escaped: one readable line, whatever the file holds.
const (
	maxQuoted  = 120
	maxMessage = 600
)

// excerpt quotes file content for a message, as %q does, cut to maxQuoted
// bytes: "abc…"(N bytes) when it is longer.
func excerpt(s string) string {
	if len(s) <= maxQuoted {
		return strconv.Quote(s)
	}
	return strconv.Quote(cutAt(s, maxQuoted)+"…") + fmt.Sprintf("(%d bytes)", len(s))
}

// cutAt cuts s to at most n bytes, at a rune boundary.
func cutAt(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// boundMessage is what an error message may show of itself: white space
// folded to single spaces, runs quoted by a parser ("…" or '…') longer
// than maxQuoted cut, anything unprintable escaped, and the whole cut to
// maxMessage bytes. Every *InputError's text goes through it, so that no
// loader path, ours or a parser's, echoes a file without bound.
func boundMessage(s string) string {
	s = oneLine(s)
	var b strings.Builder
	for i := 0; i < len(s); {
		c := s[i]
		if (c == '"' || c == '\'') && (c == '"' || i == 0 || s[i-1] == ' ' || s[i-1] == '(') {
			if end := closingQuote(s, i); end > 0 && end-i-1 > maxQuoted+len("…") {
				inner := s[i+1 : end]
				b.WriteByte(c)
				writePrintable(&b, cutAt(inner, maxQuoted))
				fmt.Fprintf(&b, "…%c(%d bytes)", c, len(inner))
				i = end + 1
				continue
			}
		}
		_, size := utf8.DecodeRuneInString(s[i:])
		writePrintable(&b, s[i:i+size])
		i += size
		if b.Len() > maxMessage {
			fmt.Fprintf(&b, "…(message of %d bytes)", len(s))
			break
		}
	}
	return b.String()
}

// closingQuote finds the quote closing the one at s[open], honouring
// backslash escapes in double quotes; -1 when there is none.
func closingQuote(s string, open int) int {
	q := s[open]
	for i := open + 1; i < len(s); i++ {
		switch {
		case q == '"' && s[i] == '\\':
			i++
		case s[i] == q:
			return i
		}
	}
	return -1
}

// writePrintable writes s with runes that are not graphic (control
// characters, invalid UTF-8) escaped as strconv.Quote escapes them.
func writePrintable(b *strings.Builder, s string) {
	for _, r := range s {
		if r != utf8.RuneError && (unicode.IsGraphic(r) || r == ' ') {
			b.WriteRune(r)
			continue
		}
		q := strconv.QuoteRune(r)
		b.WriteString(q[1 : len(q)-1])
	}
}
