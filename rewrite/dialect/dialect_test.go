package dialect

import "testing"

func TestParseServer(t *testing.T) {
	for in, want := range map[string]Server{
		"10.11.19-MariaDB-0+deb12u1":    {Flavor: MariaDB, Version: 101119},
		"5.5.5-10.6.4-MariaDB-log":      {Flavor: MariaDB, Version: 100604},
		"11.4.2-MariaDB":                {Flavor: MariaDB, Version: 110402},
		"8.0.36":                        {Flavor: MySQL, Version: 80036},
		"5.7.25-OceanBase-v4.2.1":       {Flavor: OtherFlavor, Version: 50725},
		"seekdb 1.2.0":                  {Flavor: OtherFlavor},
		"garbage":                       {Flavor: MySQL},
		"8.0.36-0ubuntu0.22.04.1-debug": {Flavor: MySQL, Version: 80036},
	} {
		if got := ParseServer(in); got != want {
			t.Errorf("ParseServer(%q) = %+v, want %+v", in, got, want)
		}
	}
}

func TestFlavorString(t *testing.T) {
	for f, want := range map[Flavor]string{MariaDB: "MariaDB", MySQL: "MySQL", OtherFlavor: "other"} {
		if got := f.String(); got != want {
			t.Errorf("%d.String() = %q, want %q", int(f), got, want)
		}
	}
}
