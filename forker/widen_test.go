package forker

import "testing"

// TestWidens: the type changes a capture follows keep every value.
func TestWidens(t *testing.T) {
	col := func(typ, dataType string) Column { return Column{Type: typ, DataType: dataType} }
	text := func(typ, dataType, collation string) Column {
		return Column{Type: typ + " CHARACTER SET utf8mb4 COLLATE " + collation, DataType: dataType, Charset: "utf8mb4", Collation: collation}
	}
	for _, tc := range []struct {
		name     string
		old, new Column
		want     bool
	}{
		{"int to bigint", col("int(11)", "int"), col("bigint(20)", "bigint"), true},
		{"tinyint to int", col("tinyint(4)", "tinyint"), col("int(11)", "int"), true},
		{"bigint to int", col("bigint(20)", "bigint"), col("int(11)", "int"), false},
		{"unsigned kept", col("int(10) unsigned", "int"), col("bigint(20) unsigned", "bigint"), true},
		{"unsigned to signed", col("int(10) unsigned", "int"), col("bigint(20)", "bigint"), false},
		{"signed to unsigned", col("int(11)", "int"), col("bigint(20) unsigned", "bigint"), false},
		{"zerofill", col("int(11)", "int"), col("bigint(20) zerofill", "bigint"), false},
		{"varchar longer", text("varchar(4)", "varchar", "utf8mb4_general_ci"), text("varchar(20)", "varchar", "utf8mb4_general_ci"), true},
		{"varchar shorter", text("varchar(20)", "varchar", "utf8mb4_general_ci"), text("varchar(4)", "varchar", "utf8mb4_general_ci"), false},
		{"varchar other collation", text("varchar(4)", "varchar", "utf8mb4_general_ci"), text("varchar(20)", "varchar", "utf8mb4_bin"), false},
		{"char to varchar", text("char(4)", "char", "utf8mb4_general_ci"), text("varchar(20)", "varchar", "utf8mb4_general_ci"), false},
		{"varchar to text", text("varchar(4)", "varchar", "utf8mb4_general_ci"), text("text", "text", "utf8mb4_general_ci"), false},
		{"text to longtext", text("text", "text", "utf8mb4_general_ci"), text("longtext", "longtext", "utf8mb4_general_ci"), true},
		{"blob to mediumblob", col("blob", "blob"), col("mediumblob", "mediumblob"), true},
		{"text to blob", text("text", "text", "utf8mb4_general_ci"), col("blob", "blob"), false},
		{"varbinary longer", col("varbinary(4)", "varbinary"), col("varbinary(8)", "varbinary"), true},
		{"decimal wider", col("decimal(10,2)", "decimal"), col("decimal(12,3)", "decimal"), true},
		{"decimal fewer decimals", col("decimal(10,2)", "decimal"), col("decimal(12,1)", "decimal"), false},
		{"decimal fewer integer digits", col("decimal(10,2)", "decimal"), col("decimal(10,3)", "decimal"), false},
		{"int to decimal", col("int(11)", "int"), col("decimal(20,0)", "decimal"), false},
		{"float to double", col("float", "float"), col("double", "double"), false},
		{"same", col("int(11)", "int"), col("int(11)", "int"), true},
	} {
		if got := Widens(tc.old, tc.new); got != tc.want {
			t.Errorf("%s: Widens = %v, want %v", tc.name, got, tc.want)
		}
	}
}
