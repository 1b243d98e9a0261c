package main

import "testing"

func TestKeepClients(t *testing.T) {
	all := scenarios()
	got, err := keepClients(all, "guise, net/http")
	if err != nil {
		t.Fatal(err)
	}
	for _, sc := range got {
		for _, sp := range sc.specs() {
			if sp.name != "guise" && sp.name != "net/http" {
				t.Errorf("%s kept %s", sc.name, sp.name)
			}
		}
	}
	if n := len(got[0].specs()); n != 2 {
		t.Errorf("%s has %d clients, want 2", got[0].name, n)
	}
	if _, err := keepClients(all, "curl"); err == nil {
		t.Error("an unknown client was accepted")
	}
	if same, _ := keepClients(all, ""); len(same[0].specs()) != len(all[0].specs()) {
		t.Error("no list dropped clients")
	}
}
