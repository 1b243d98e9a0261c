package main

import (
	"fmt"
	"runtime"
	"slices"
	"strings"

	"github.com/guise-http/guise/internal/version"
	"github.com/guise-http/guise/profile"
	"github.com/spf13/cobra"
)

func newVersionCmd() *cobra.Command {
	var short bool
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print guise's version, the commit it was built from and the embedded profiles' browsers",
		Long: `Print guise's release version and C ABI version, the commit the binary was
built from (when the go command stamped one: a build in a git checkout), the
Go toolchain and platform, and the browser versions of the embedded profiles.
--short prints the release version alone.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			w := cmd.OutOrStdout()
			if short {
				_, err := fmt.Fprintln(w, version.Version)
				return err
			}
			b := version.ReadBuild()
			fmt.Fprintf(w, "guise %s (C ABI %d)\n", version.Version, version.ABI)
			switch {
			case b.Commit != "" && b.Modified:
				fmt.Fprintf(w, "commit   %s, with uncommitted changes\n", b.Commit)
			case b.Commit != "":
				fmt.Fprintf(w, "commit   %s\n", b.Commit)
			case b.Module != "" && b.Module != "(devel)":
				fmt.Fprintf(w, "module   %s\n", b.Module)
			default:
				fmt.Fprintln(w, "commit   unknown (not stamped by the go command)")
			}
			fmt.Fprintf(w, "go       %s %s/%s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
			fmt.Fprintf(w, "browsers %s\n", strings.Join(browserVersions(), ", "))
			return nil
		},
	}
	cmd.Flags().BoolVarP(&short, "short", "s", false, "print the release version alone")
	return cmd
}

// browserVersions lists each browser of the embedded profiles with its
// versions, "chrome 156", in the order of profile.Names.
func browserVersions() []string {
	var out []string
	for _, name := range profile.Names() {
		p, err := profile.Lookup(name)
		if err != nil {
			continue
		}
		s := fmt.Sprintf("%s %d", p.Browser, p.Version)
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}
