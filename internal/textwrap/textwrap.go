// Package textwrap breaks prose into lines for terminal output.
package textwrap

import "strings"

// Wrap breaks text into lines of at most width runes at spaces; a word
// longer than width (a URL) gets a line of its own.
func Wrap(text string, width int) []string {
	words := strings.Fields(text)
	if len(words) == 0 {
		return nil
	}
	var lines []string
	line := words[0]
	for _, word := range words[1:] {
		if len([]rune(line))+1+len([]rune(word)) > width {
			lines = append(lines, line)
			line = word
			continue
		}
		line += " " + word
	}
	return append(lines, line)
}
