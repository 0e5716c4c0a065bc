package check

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// SelectorOf is metav1.LabelSelectorAsSelector without its cost on the
// common selector: one of matchLabels only, whose keys and values are
// plainly valid (checked here byte by byte, more strictly than the API
// server does), becomes labels.SelectorFromValidatedSet, the same selector
// without apimachinery's regular-expression validation of every key and
// value. Anything else, including every selector that is invalid or only
// might be, goes to LabelSelectorAsSelector, so its errors are the same.
// pdb-blocks-drain turns thousands of budgets' selectors into selectors at
// 100,000 pods, where that validation was a seventh of its time.
func SelectorOf(ls *metav1.LabelSelector) (labels.Selector, error) {
	if ls == nil || len(ls.MatchExpressions) > 0 || len(ls.MatchLabels) == 0 {
		return metav1.LabelSelectorAsSelector(ls)
	}
	for k, v := range ls.MatchLabels {
		if !plainLabelKey(k) || !plainLabelValue(v) {
			return metav1.LabelSelectorAsSelector(ls)
		}
	}
	return labels.SelectorFromValidatedSet(labels.Set(ls.MatchLabels)), nil
}

// plainLabelKey reports whether k is a label key that is certainly valid:
// an optional DNS subdomain prefix of lowercase dot-separated labels, each
// starting and ending with a letter or digit, then "/", then a name.
func plainLabelKey(k string) bool {
	prefix, name := "", k
	for i := 0; i < len(k); i++ {
		if k[i] == '/' {
			prefix, name = k[:i], k[i+1:]
			break
		}
	}
	if prefix == "" && len(name) != len(k) {
		return false // "/name"
	}
	if len(prefix) > 253 || !plainName(name) {
		return false
	}
	if prefix == "" {
		return true
	}
	start := 0
	for i := 0; i <= len(prefix); i++ {
		if i < len(prefix) && prefix[i] != '.' {
			c := prefix[i]
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
				return false
			}
			continue
		}
		label := prefix[start:i]
		if label == "" || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		start = i + 1
	}
	return true
}

// plainLabelValue reports whether v is certainly a valid label value: empty,
// or a name.
func plainLabelValue(v string) bool { return v == "" || plainName(v) }

// plainName reports whether s is 1 to 63 letters, digits, '-', '_' or '.',
// starting and ending with a letter or digit.
func plainName(s string) bool {
	if len(s) == 0 || len(s) > 63 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		alnum := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		if !alnum && (i == 0 || i == len(s)-1 || c != '-' && c != '_' && c != '.') {
			return false
		}
	}
	return true
}
