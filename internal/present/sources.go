package present

import (
	"reflect"
	"sort"
	"strings"

	"github.com/kubegap/kubegap/internal/library"
)

// Source is a case's source with the sections it supports, in words.
type Source struct {
	library.Source
	// SupportsText is "root cause, trigger"; empty when the case data does
	// not say.
	SupportsText string
}

// Inference is a case section no source states outright, with why it is
// still written.
type Inference struct {
	Section string
	Why     string
}

// sectionNames are the case sections as text names them.
var sectionNames = map[string]string{
	"rootCause":           "root cause",
	"contributingFactors": "contributing factors",
	"actionItems":         "action items",
}

// SectionName turns a schema section key ("rootCause") into words.
func SectionName(key string) string {
	if n, ok := sectionNames[key]; ok {
		return n
	}
	return key
}

// Sources presents c's sources.
func Sources(c *library.Case) []Source {
	out := make([]Source, 0, len(c.Sources))
	for _, s := range c.Sources {
		var names []string
		for _, k := range stringsField(s, "Supports") {
			names = append(names, SectionName(k))
		}
		out = append(out, Source{Source: s, SupportsText: strings.Join(names, ", ")})
	}
	return out
}

// Inferences lists c's inferred sections, sorted by section.
func Inferences(c *library.Case) []Inference {
	m := stringMapField(*c, "Inferred")
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]Inference, 0, len(keys))
	for _, k := range keys {
		out = append(out, Inference{Section: SectionName(k), Why: m[k]})
	}
	return out
}

// stringsField and stringMapField read a field of the case schema by
// name. Source.Supports and Case.Inferred are being added to the schema on
// another branch; reading them by name lets the pages show them as soon
// as the data has them, and nothing before. Once both branches are in,
// these can become plain field reads.
func stringsField(v any, name string) []string {
	f := reflect.ValueOf(v).FieldByName(name)
	if !f.IsValid() {
		return nil
	}
	s, _ := f.Interface().([]string)
	return s
}

func stringMapField(v any, name string) map[string]string {
	f := reflect.ValueOf(v).FieldByName(name)
	if !f.IsValid() {
		return nil
	}
	m, _ := f.Interface().(map[string]string)
	return m
}
