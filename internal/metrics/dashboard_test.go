package metrics

import (
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

const dashboardFile = "../../deploy/grafana/kubegap-dashboard.json"

// queries collects every PromQL expression of a Grafana dashboard: panel
// targets' "expr" and template variables' "definition" and "query".
func queries(v any, into *[]string) {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if s, ok := x.(string); ok && (k == "expr" || k == "definition") {
				*into = append(*into, s)
			}
			if q, ok := v["query"].(map[string]any); ok && k == "query" {
				if s, ok := q["query"].(string); ok {
					*into = append(*into, s)
				}
			}
			queries(x, into)
		}
	case []any:
		for _, x := range v {
			queries(x, into)
		}
	}
}

var (
	// What is not a metric name: string literals, label matchers, range
	// and subquery durations, Grafana variables, the label lists of
	// grouping modifiers, numbers.
	promStrings   = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)
	promMatchers  = regexp.MustCompile(`\{[^}]*\}`)
	promRanges    = regexp.MustCompile(`\[[^\]]*\]`)
	grafanaVars   = regexp.MustCompile(`\$\{?\w+\}?`)
	promGrouping  = regexp.MustCompile(`\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)`)
	promNumbers   = regexp.MustCompile(`\b\d+(?:\.\d+)?(?:e[+-]?\d+)?\b`)
	promIdent     = regexp.MustCompile(`[a-zA-Z_:][a-zA-Z0-9_:]*(\s*\()?`)
	promOperators = []string{"and", "or", "unless", "bool", "offset", "by", "without", "on", "ignoring", "group_left", "group_right"}
	// labelValuesArg is label_values(METRIC, LABEL): its second argument
	// is a label, not a metric.
	labelValuesArg = regexp.MustCompile(`label_values\(\s*([^,)]+),\s*\w+\s*\)`)
)

// metricNames returns the metric names a PromQL expression reads.
func metricNames(expr string) []string {
	expr = labelValuesArg.ReplaceAllString(expr, "label_values($1)")
	for _, re := range []*regexp.Regexp{promStrings, promMatchers, promRanges, grafanaVars, promGrouping, promNumbers} {
		expr = re.ReplaceAllString(expr, " ")
	}
	var names []string
	for _, m := range promIdent.FindAllStringSubmatch(expr, -1) {
		name := strings.TrimSpace(m[0])
		if m[1] != "" || slices.Contains(promOperators, name) {
			continue // a function call, or an operator
		}
		names = append(names, name)
	}
	return names
}

func TestMetricNamesParser(t *testing.T) {
	for expr, want := range map[string][]string{
		`sum by (severity) (kubegap_findings{cluster=~"$cluster",severity="high"}) or vector(0)`: {"kubegap_findings"},
		`time() - max by (cluster) (kubegap_audit_last_success_timestamp_seconds{x="a{b}"})`:     {"kubegap_audit_last_success_timestamp_seconds"},
		`sum(increase(kubegap_audit_errors_total[1h])) / on(cluster) group_left up`:              {"kubegap_audit_errors_total", "up"},
		`label_values(kubegap_build_info, cluster)`:                                              {"kubegap_build_info"},
		`kubegap_check_status{status!="pass"} == 1 and ${other}`:                                 {"kubegap_check_status"},
	} {
		if got := metricNames(expr); !slices.Equal(got, want) {
			t.Errorf("metricNames(%q) = %v, want %v", expr, got, want)
		}
	}
}

// TestDashboardUsesOnlyExportedMetrics: every query of the Grafana
// dashboard in deploy/ reads metrics kubegap exports, and at least one.
func TestDashboardUsesOnlyExportedMetrics(t *testing.T) {
	b, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var dash any
	if err := json.Unmarshal(b, &dash); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	var exprs []string
	queries(dash, &exprs)
	if len(exprs) < 5 {
		t.Fatalf("%s: %d queries found, want the dashboard's panels", dashboardFile, len(exprs))
	}
	used := map[string]bool{}
	for _, e := range exprs {
		names := metricNames(e)
		if len(names) == 0 {
			t.Errorf("query %q reads no metric", e)
		}
		for _, n := range names {
			if !slices.Contains(Names(), n) {
				t.Errorf("query %q reads %s, which kubegap does not export (it exports %s)", e, n, strings.Join(Names(), ", "))
			}
			used[n] = true
		}
	}
	for _, n := range Names() {
		if !used[n] {
			t.Errorf("the dashboard shows nothing of %s", n)
		}
	}
}

const alertsFile = "../../deploy/prometheus/kubegap-alerts.yaml"

// TestAlertsUseOnlyExportedMetrics: the alerting rules in deploy/ read
// only metrics kubegap exports.
func TestAlertsUseOnlyExportedMetrics(t *testing.T) {
	b, err := os.ReadFile(alertsFile)
	if err != nil {
		t.Fatal(err)
	}
	var rules struct {
		Groups []struct {
			Name  string `json:"name"`
			Rules []struct {
				Alert       string            `json:"alert"`
				Expr        string            `json:"expr"`
				Labels      map[string]string `json:"labels"`
				Annotations map[string]string `json:"annotations"`
			} `json:"rules"`
		} `json:"groups"`
	}
	if err := yaml.UnmarshalStrict(b, &rules); err != nil {
		t.Fatalf("%s: %v", alertsFile, err)
	}
	n := 0
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			n++
			names := metricNames(r.Expr)
			if len(names) == 0 {
				t.Errorf("%s: %q reads no metric", r.Alert, r.Expr)
			}
			for _, name := range names {
				if !slices.Contains(Names(), name) {
					t.Errorf("%s: %q reads %s, which kubegap does not export", r.Alert, r.Expr, name)
				}
			}
		}
	}
	if n == 0 {
		t.Fatalf("%s holds no rules", alertsFile)
	}
}
