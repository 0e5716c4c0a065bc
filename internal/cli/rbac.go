package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/kubegap/kubegap/internal/audit"
	"github.com/kubegap/kubegap/internal/checks"
	"github.com/kubegap/kubegap/internal/cluster"
	"github.com/kubegap/kubegap/internal/rbacgen"
	"github.com/kubegap/kubegap/internal/reportapi"
)

func newRBACCommand(app *App) *cobra.Command {
	var enable, skip []string
	var namespace, user, group, serviceAccount string
	var publisher bool
	var formats []string
	cmd := &cobra.Command{
		Use:   "rbac",
		Short: "Print the least-privilege Role(s) and bindings the selected checks need",
		Long: `Rbac prints, as YAML for kubectl apply, the ClusterRole that grants get, list
and watch on exactly the resources the selected checks read (get alone on the few
ConfigMaps kubegap reads by name; no Secrets, no write verb). For all checks it is
deploy/rbac.yaml. With --namespace it is a Role in that namespace for the
namespaced resources and a ClusterRole for the cluster-scoped ones (nodes,
namespaces...), which a namespace audit still reads. --user, --group or
--service-account adds the bindings; without one the output says how to bind.

With --publisher it prints instead what 'kubegap publish' needs: get, list,
create, update, patch and delete on the report objects it writes (PolicyReports
and ClusterPolicyReports, OpenReports Reports and ClusterReports; --format picks
one), nothing else. Bind that to a ServiceAccount of its own, never the audit's.
For all formats it is deploy/rbac-publisher.yaml.`,
		Example: `  kubegap rbac | kubectl apply -f -
  kubegap rbac --checks version-skew,image-pull --user alice@example.com | kubectl apply -f -
  kubegap rbac --namespace team-a --service-account team-a/kubegap | kubectl apply -f -
  kubegap rbac --publisher --service-account kubegap/kubegap-publisher | kubectl apply -f -`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			if publisher {
				return rbacPublisher(app, enable, skip, formats, namespace, user, group, serviceAccount)
			}
			if len(formats) > 0 {
				return withCode(ExitError, errors.New("--format applies to --publisher"))
			}
			selected, err := audit.Select(checks.All(), enable, skip)
			if err != nil {
				return withCode(ExitError, err)
			}
			if err := cluster.ValidateNamespace(namespace); err != nil {
				return withCode(ExitError, err)
			}
			subject, err := rbacSubject(user, group, serviceAccount)
			if err != nil {
				return withCode(ExitError, err)
			}
			_, err = fmt.Fprint(app.Out, rbacgen.YAML(audit.Resources(selected), rbacgen.Options{Namespace: namespace, Subject: subject}))
			return err
		},
	}
	cmd.Flags().StringSliceVar(&enable, "checks", nil, "grant only what these checks read (IDs in any case, or unique prefixes)")
	cmd.Flags().StringSliceVar(&skip, "skip-checks", nil, "leave out what only these checks read")
	cmd.Flags().StringVarP(&namespace, "namespace", "n", "", "grant what an audit of this namespace reads: a Role in it plus a ClusterRole for the cluster-scoped resources")
	cmd.Flags().StringVar(&user, "user", "", "bind the role(s) to this user")
	cmd.Flags().StringVar(&group, "group", "", "bind the role(s) to this group")
	cmd.Flags().StringVar(&serviceAccount, "service-account", "", "bind the role(s) to this service account, as NAMESPACE/NAME")
	cmd.Flags().BoolVar(&publisher, "publisher", false,
		"print instead what 'kubegap publish' needs: get, list, create, update, patch and delete on the report objects, for a ServiceAccount of its own")
	cmd.Flags().StringSliceVar(&formats, "format", nil, "with --publisher: grant only these report APIs (policyreport, openreports; default both)")
	return cmd
}

// rbacPublisher prints kubegap publish's Role(s) and bindings.
func rbacPublisher(app *App, enable, skip, formats []string, namespace, user, group, serviceAccount string) error {
	if len(enable) > 0 || len(skip) > 0 {
		return withCode(ExitError, errors.New("--checks and --skip-checks select what an audit reads; the publisher's access does not depend on them"))
	}
	o := rbacgen.PublisherOptions{Namespace: namespace}
	for _, f := range formats {
		pf, err := reportapi.ParseFormat(f)
		if err != nil {
			return withCode(ExitError, fmt.Errorf("--format: %w", err))
		}
		o.Formats = append(o.Formats, pf)
	}
	if err := cluster.ValidateNamespace(namespace); err != nil {
		return withCode(ExitError, err)
	}
	subject, err := rbacSubject(user, group, serviceAccount)
	if err != nil {
		return withCode(ExitError, err)
	}
	o.Subject = subject
	_, err = fmt.Fprint(app.Out, rbacgen.PublisherYAML(o))
	return err
}

// rbacSubject is the one subject --user, --group or --service-account names.
func rbacSubject(user, group, serviceAccount string) (rbacgen.Subject, error) {
	var set []rbacgen.Subject
	if user != "" {
		set = append(set, rbacgen.Subject{Kind: "User", Name: user})
	}
	if group != "" {
		set = append(set, rbacgen.Subject{Kind: "Group", Name: group})
	}
	if serviceAccount != "" {
		ns, name, ok := strings.Cut(serviceAccount, "/")
		if !ok || cluster.ValidateNamespace(ns) != nil || ns == "" || len(validation.IsDNS1123Subdomain(name)) > 0 {
			return rbacgen.Subject{}, fmt.Errorf("--service-account %q: want NAMESPACE/NAME", serviceAccount)
		}
		set = append(set, rbacgen.Subject{Kind: "ServiceAccount", Name: name, Namespace: ns})
	}
	switch len(set) {
	case 0:
		return rbacgen.Subject{}, nil
	case 1:
		if strings.ContainsAny(set[0].Name, "\n\r") {
			return rbacgen.Subject{}, errors.New("a subject name cannot hold a line break")
		}
		return set[0], nil
	}
	return rbacgen.Subject{}, errors.New("--user, --group and --service-account: give one")
}
