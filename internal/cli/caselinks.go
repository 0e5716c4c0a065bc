package cli

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kubegap/kubegap/internal/report"
)

// caseURLEnv is the environment variable that points case links at other
// pages (a 'kubegap site' on an internal host, a fork's docs/cases).
const caseURLEnv = "KUBEGAP_CASE_BASE_URL"

// resolveCaseURL picks where the report's case links point: --case-base-url,
// else KUBEGAP_CASE_BASE_URL, else the config file's case-base-url, else
// report.DefaultCaseURL (this repository's docs/cases pages). The report
// records which one it was (caseURLFrom).
func resolveCaseURL(cmd *cobra.Command, app *App, fl *auditFlags) error {
	switch {
	case cmd.Flags().Changed("case-base-url"):
		fl.caseURLFrom = "--case-base-url"
		if err := validCaseURL(fl.caseURL); err != nil {
			return fmt.Errorf("--case-base-url %q: %w", fl.caseURL, err)
		}
	case app.Getenv(caseURLEnv) != "":
		fl.caseURL, fl.caseURLFrom = app.Getenv(caseURLEnv), caseURLEnv
		if err := validCaseURL(fl.caseURL); err != nil {
			// The variable's value is not echoed: the environment may hold
			// what should not reach a log.
			return fmt.Errorf("%s: %w", caseURLEnv, err)
		}
	case fl.cfg != nil && fl.cfg.CaseBaseURL != "":
		fl.caseURL, fl.caseURLFrom = fl.cfg.CaseBaseURL, "config"
		fl.cfgSettings = append(fl.cfgSettings, "case-base-url")
		if err := validCaseURL(fl.caseURL); err != nil {
			return fmt.Errorf("config %s: case-base-url %q: %w", fl.cfg.Path, fl.caseURL, err)
		}
	default:
		fl.caseURL, fl.caseURLFrom = report.DefaultCaseURL, "default"
	}
	return nil
}

// validCaseURL wants an absolute http or https URL: a link in a report is
// read far from the directory it was written in.
func validCaseURL(s string) error {
	u, err := url.Parse(strings.ReplaceAll(s, "{id}", "ID"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("want an http or https URL that a case ID is appended to, or with {id} for it, such as https://kubegap.example.com/cases/ or %s", report.DefaultCaseURL)
	}
	return nil
}
