package integration

import (
	"fmt"
	"strings"
	"testing"

	gormmysql "gorm.io/driver/mysql"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"
)

// gormUser and gormOrder are the models of the GORM workload.
type gormUser struct {
	ID     uint   `gorm:"primaryKey"`
	Name   string `gorm:"size:64;uniqueIndex"`
	Email  *string
	Orders []gormOrder `gorm:"foreignKey:UserID"`
}

type gormOrder struct {
	ID     uint `gorm:"primaryKey"`
	UserID uint `gorm:"index"`
	Total  float64
	Note   string `gorm:"size:100"`
}

// gormWorkload migrates, writes, reads with a relationship, rolls a
// transaction back and reflects on the schema, returning a transcript of
// everything it observed.
func gormWorkload(t *testing.T, dsn string, run int) string {
	t.Helper()
	db, err := gorm.Open(gormmysql.Open(dsn), &gorm.Config{Logger: logger.Discard})
	if err != nil {
		t.Fatalf("gorm open: %v", err)
	}
	sqlDB, _ := db.DB()
	defer sqlDB.Close()
	var out []string
	log := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }

	log("has users before: %v", db.Migrator().HasTable(&gormUser{}))
	if err := db.AutoMigrate(&gormUser{}, &gormOrder{}); err != nil {
		t.Fatalf("AutoMigrate: %v", err)
	}
	if err := db.AutoMigrate(&gormUser{}, &gormOrder{}); err != nil { // idempotent
		t.Fatalf("second AutoMigrate: %v", err)
	}
	log("has users: %v, has orders: %v", db.Migrator().HasTable(&gormUser{}), db.Migrator().HasTable(&gormOrder{}))
	cols, err := db.Migrator().ColumnTypes(&gormUser{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cols {
		n, _ := c.Nullable()
		log("users column %s %s nullable=%v", c.Name(), c.DatabaseTypeName(), n)
	}
	log("index on name: %v", db.Migrator().HasIndex(&gormUser{}, "Name"))

	email := "ann@example.com"
	u := gormUser{Name: fmt.Sprintf("ann-%d", run), Email: &email, Orders: []gormOrder{{Total: 9.5, Note: "first"}, {Total: 20, Note: "second"}}}
	if err := db.Create(&u).Error; err != nil {
		t.Fatalf("create: %v", err)
	}
	log("created user id>0: %v, orders: %d", u.ID > 0, len(u.Orders))
	if err := db.Model(&gormOrder{}).Where("user_id = ? AND note = ?", u.ID, "first").Update("total", 11.25).Error; err != nil {
		t.Fatal(err)
	}
	var got gormUser
	if err := db.Preload("Orders").First(&got, "name = ?", u.Name).Error; err != nil {
		t.Fatal(err)
	}
	for _, o := range got.Orders {
		log("order %s %.2f", o.Note, o.Total)
	}
	err = db.Transaction(func(tx *gorm.DB) error {
		if err := tx.Create(&gormOrder{UserID: u.ID, Total: 1, Note: "rolled back"}).Error; err != nil {
			return err
		}
		return fmt.Errorf("roll back")
	})
	log("transaction: %v", err)
	var n int64
	db.Model(&gormOrder{}).Where("note = ?", "rolled back").Count(&n)
	log("rolled back rows: %d", n)
	dup := gormUser{Name: u.Name}
	log("duplicate name error: %v", db.Create(&dup).Error != nil)
	if err := db.Where("note = ?", "second").Delete(&gormOrder{}).Error; err != nil {
		t.Fatal(err)
	}
	db.Model(&gormOrder{}).Count(&n)
	log("orders left: %d", n)
	var tables []string
	db.Raw("SELECT table_name FROM information_schema.tables WHERE table_schema = DATABASE() ORDER BY 1").Scan(&tables)
	log("tables: %v", tables)
	return strings.Join(out, "\n")
}

// runGorm runs the GORM workload (run n) against tg.
func runGorm(t *testing.T, tg ormTarget, n int) string {
	t.Helper()
	return gormWorkload(t, fmt.Sprintf("%s:%s@tcp(%s)/%s?parseTime=true&charset=utf8mb4", tg.user, tg.password, tg.addr, tg.db), n)
}

// TestORMGorm runs the GORM workload twice directly against MariaDB and
// twice through a sandbox whose upstream account may only read production:
// the transcripts match, and production gains no table.
func TestORMGorm(t *testing.T) {
	ormCompare(t, "gorm", "gorm", func(tg ormTarget, n int) string { return runGorm(t, tg, n) })
}
