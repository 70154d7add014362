package tabledef

import (
	"strings"
	"testing"
)

// FuzzParse: whatever the text, Parse returns or fails without panicking;
// what it returns is the text's own: every definition is a part of it, and
// Alter between a table and itself changes nothing.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"CREATE TABLE `t` (\n  `id` int(11) NOT NULL,\n  PRIMARY KEY (`id`)\n) ENGINE=InnoDB AUTO_INCREMENT=5",
		"CREATE TABLE `a``b` (\n  `c,d` varchar(3) DEFAULT 'x,)',\n  KEY `k` (`c,d`),\n  CONSTRAINT `f` FOREIGN KEY (`c,d`) REFERENCES `p` (`x`)\n) PARTITION BY HASH (`id`)",
		"CREATE TABLE `t` (`x` int, CONSTRAINT `c` CHECK (`x` > 0))",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		td, err := Parse(text)
		if err != nil {
			return
		}
		for _, it := range td.Items {
			if !strings.Contains(text, it.Text) {
				t.Fatalf("Parse(%q): item %q is not the text's", text, it.Text)
			}
		}
		if pre, post, part := Alter(td, td); len(pre) > 0 || len(post) > 0 || part != "" {
			t.Fatalf("Alter of %q to itself: %q %q %q", text, pre, post, part)
		}
	})
}
