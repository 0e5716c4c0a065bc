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
)

func newRBACCommand(app *App) *cobra.Command {
	var enable, skip []string
	var namespace, user, group, serviceAccount string
	cmd := &cobra.Command{
		Use:   "rbac",
		Short: "Print the least-privilege Role(s) and bindings the selected checks need",
		Long: `Rbac prints, as YAML for kubectl apply, the ClusterRole that grants get, list
and watch on exactly the resources the selected checks read (get alone on the few
ConfigMaps kubegap reads by name; no Secrets, no write verb). For all checks it is
deploy/rbac.yaml. With --namespace it is a Role in that namespace for the
namespaced resources and a ClusterRole for the cluster-scoped ones (nodes,
namespaces...), which a namespace audit still reads. --user, --group or
--service-account adds the bindings; without one the output says how to bind.`,
		Example: `  kubegap rbac | kubectl apply -f -
  kubegap rbac --checks version-skew,image-pull --user alice@example.com | kubectl apply -f -
  kubegap rbac --namespace team-a --service-account team-a/kubegap | kubectl apply -f -`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
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
	return cmd
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
