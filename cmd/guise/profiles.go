package main

import (
	"bytes"
	"fmt"
	"text/tabwriter"

	"github.com/guise-http/guise/profile"
	"github.com/spf13/cobra"
)

func newProfilesCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "profiles",
		Short: "List the browser profiles",
		Long: `List the embedded browser profiles: name, browser, version, operating system,
and whether the wire format was recorded from the real browser or built
from public facts (or, "derived from", reuses a recorded profile's wire format
with header values of its own). "` + profile.Default + `" (the default) is the newest Chrome on ` + profile.DefaultOS.String() + `.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			def, err := profile.Lookup(profile.Default)
			if err != nil {
				return err
			}
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "NAME\tBROWSER\tVERSION\tOS\tSOURCE")
			for _, name := range profile.Names() {
				p, err := profile.Lookup(name)
				if err != nil {
					return err
				}
				src := "recorded"
				if !p.Recorded {
					src = "public facts"
					if from := derivedFrom(p); from != "" {
						src = "derived from " + from
					}
				}
				if p == def {
					name += " (default)"
				}
				fmt.Fprintf(w, "%s\t%s\t%d\t%s\t%s\n", name, p.Browser, p.Version, p.OS, src)
			}
			return w.Flush()
		},
	}
}

// derivedFrom names the recorded profile whose wire format (the recorded
// ClientHello) p reuses, "" if none: p's header values are then derived
// (Edge, Chrome on Android), not its wire format.
func derivedFrom(p *profile.Profile) string {
	for _, name := range profile.Names() {
		r, err := profile.Lookup(name)
		if err == nil && r.Recorded && bytes.Equal(r.TLS.Hello, p.TLS.Hello) {
			return r.Name
		}
	}
	return ""
}
