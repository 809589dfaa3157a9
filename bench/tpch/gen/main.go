// Command gen writes the eight TPC-H tables (region, nation, supplier,
// customer, part, partsupp, orders, lineitem) as CSV files with a header
// line, following the TPC-H specification's schemas (clause 1.4), key
// relationships, cardinalities (clause 4.2.5) and value distributions
// (clause 4.2.3) at a given scale factor:
//
//	gen -sf 1 -dir /tmp/tpch-sf1
//
// Byte-identical dbgen output is not the aim (dbgen cannot be fetched here):
// values come from an own splitmix64 stream seeded by -seed, and comments
// are drawn from a small word list instead of dbgen's text grammar, keeping
// the words the 22 queries search for ("special", "requests", "Customer",
// "Complaints") at similar frequencies. Answers are compared between the
// engines of one run over the same files, never with published results.
//
// What follows the specification: every key range and foreign key (orders
// keys sparse, 8 of every 32; customers with custkey divisible by 3 place no
// orders; each part has 4 suppliers by the spec's formula, and a lineitem's
// supplier is one of its part's 4), row counts per scale factor (lineitem
// averages 4 lines per order, 1..7), dates (orders 1992-01-01..1998-08-02;
// ship, commit and receipt dates relative to the order date), flags and
// statuses derived from dates against CURRENTDATE 1995-06-17, prices
// (p_retailprice formula; extendedprice = quantity × retailprice;
// o_totalprice from its lines), phone numbers with country code
// nationkey+10, the 150 part types, 40 containers, 25 brands, 5 market
// segments, priorities, ship modes and instructions, and p_name from the 92
// colour words.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/quarrydb/quarry/bench/splitmix"
)

// rng adds the generator's draws to the benchmarks' splitmix64 stream.
type rng struct{ splitmix.Rand }

// between returns a uniform integer in [lo, hi].
func (r *rng) between(lo, hi int64) int64 { return r.Between(lo, hi) }

func (r *rng) pick(xs []string) string { return xs[r.Next()%uint64(len(xs))] }

var (
	regions = []string{"AFRICA", "AMERICA", "ASIA", "EUROPE", "MIDDLE EAST"}
	nations = []struct {
		name   string
		region int
	}{
		{"ALGERIA", 0}, {"ARGENTINA", 1}, {"BRAZIL", 1}, {"CANADA", 1}, {"EGYPT", 4},
		{"ETHIOPIA", 0}, {"FRANCE", 3}, {"GERMANY", 3}, {"INDIA", 2}, {"INDONESIA", 2},
		{"IRAN", 4}, {"IRAQ", 4}, {"JAPAN", 2}, {"JORDAN", 4}, {"KENYA", 0},
		{"MOROCCO", 0}, {"MOZAMBIQUE", 0}, {"PERU", 1}, {"CHINA", 2}, {"ROMANIA", 3},
		{"SAUDI ARABIA", 4}, {"VIETNAM", 2}, {"RUSSIA", 3}, {"UNITED KINGDOM", 3}, {"UNITED STATES", 1},
	}
	colors = strings.Fields(`almond antique aquamarine azure beige bisque black blanched blue blush brown burlywood
		burnished chartreuse chiffon chocolate coral cornflower cornsilk cream cyan dark deep dim dodger drab
		firebrick floral forest frosted gainsboro ghost goldenrod green grey honeydew hot indian ivory khaki
		lace lavender lawn lemon light lime linen magenta maroon medium metallic midnight mint misty moccasin
		navajo navy olive orange orchid pale papaya peach peru pink plum powder puff purple red rose rosy royal
		saddle salmon sandy seashell sienna sky slate smoke snow spring steel tan thistle tomato turquoise
		violet wheat white yellow`)
	typeS1     = []string{"STANDARD", "SMALL", "MEDIUM", "LARGE", "ECONOMY", "PROMO"}
	typeS2     = []string{"ANODIZED", "BURNISHED", "PLATED", "POLISHED", "BRUSHED"}
	typeS3     = []string{"TIN", "NICKEL", "BRASS", "STEEL", "COPPER"}
	contS1     = []string{"SM", "LG", "MED", "JUMBO", "WRAP"}
	contS2     = []string{"CASE", "BOX", "BAG", "JAR", "PKG", "PACK", "CAN", "DRUM"}
	segments   = []string{"AUTOMOBILE", "BUILDING", "FURNITURE", "MACHINERY", "HOUSEHOLD"}
	priorities = []string{"1-URGENT", "2-HIGH", "3-MEDIUM", "4-NOT SPECIFIED", "5-LOW"}
	instructs  = []string{"DELIVER IN PERSON", "COLLECT COD", "NONE", "TAKE BACK RETURN"}
	modes      = []string{"REG AIR", "AIR", "RAIL", "SHIP", "TRUCK", "MAIL", "FOB"}
	// words for comments: dbgen's nouns, verbs, adjectives and adverbs (a
	// subset), including "special" and "requests" so Q13's pattern matches
	// a similar share of orders.
	words = strings.Fields(`foxes ideas theodolites pinto beans instructions dependencies excuses platelets
		asymptotes courts dolphins multipliers sauternes warthogs frets dinos attainments somas Tiresias
		patterns forges braids hockey players frays warhorses dugouts notornis epitaphs pearls tithes
		waters orbits gifts sheaves depths sentiments decoys realms pains grouches escapades packages
		requests accounts deposits sleep wake are cajole haggle nag use boost affix detect integrate
		maintain nod was lose sublate solve thrash promise engage hinder print x-ray breach eat grow
		impress mold poach serve run dazzle snooze doze unwind kindle play hang believe furious sly
		careful blithe quick fluffy slow quiet ruthless thin close dogged daring brave stealthy permanent
		enticing idle busy regular final ironic even bold silent special pending express fluffily
		furiously carefully blithely quickly slowly quietly ruthlessly thinly closely doggedly daringly
		bravely stealthily permanently enticingly idly busily regularly finally ironically evenly boldly
		silently about above according across after against along alongside among around at atop before
		behind beneath beside besides between beyond by despite during except for from inside instead`)
	startDate   = time.Date(1992, 1, 1, 0, 0, 0, 0, time.UTC)
	currentDate = time.Date(1995, 6, 17, 0, 0, 0, 0, time.UTC)
	// orders are placed up to ENDDATE - 151 days (1998-12-31 - 151).
	lastOrder = time.Date(1998, 12, 31, 0, 0, 0, 0, time.UTC).AddDate(0, 0, -151)
)

// text returns a comment of about minLen..maxLen characters.
func (r *rng) text(minLen, maxLen int) string {
	n := int(r.between(int64(minLen), int64(maxLen)))
	var b strings.Builder
	for b.Len() < n {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(r.pick(words))
	}
	s := b.String()
	if len(s) > maxLen {
		s = strings.TrimRight(s[:maxLen], " ")
	}
	return s
}

// vstring is the spec's random v-string: alphanumerics, length lo..hi.
func (r *rng) vstring(lo, hi int) string {
	const alpha = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789,. "
	n := int(r.between(int64(lo), int64(hi)))
	b := make([]byte, n)
	for i := range b {
		b[i] = alpha[r.Next()%uint64(len(alpha))]
	}
	return strings.TrimSpace(string(b)) + "x"
}

func (r *rng) phone(nation int) string {
	return fmt.Sprintf("%d-%03d-%03d-%04d", nation+10, r.between(100, 999), r.between(100, 999), r.between(1000, 9999))
}

// money formats hundredths as a decimal with 2 places.
func money(cents int64) string {
	sign := ""
	if cents < 0 {
		sign, cents = "-", -cents
	}
	return fmt.Sprintf("%s%d.%02d", sign, cents/100, cents%100)
}

func day(t time.Time) string { return t.Format("2006-01-02") }

// csvField quotes s when it holds a comma or a quote.
func csvField(s string) string {
	if strings.ContainsAny(s, ",\"\n") {
		return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
	}
	return s
}

type table struct {
	f *os.File
	w *bufio.Writer
}

func create(dir, name, header string) *table {
	f, err := os.Create(filepath.Join(dir, name+".csv"))
	if err != nil {
		fail(err)
	}
	t := &table{f: f, w: bufio.NewWriterSize(f, 1<<20)}
	t.w.WriteString(header + "\n")
	return t
}

func (t *table) row(fields ...string) {
	for i, s := range fields {
		if i > 0 {
			t.w.WriteByte(',')
		}
		t.w.WriteString(csvField(s))
	}
	t.w.WriteByte('\n')
}

func (t *table) close() {
	if err := t.w.Flush(); err != nil {
		fail(err)
	}
	if err := t.f.Close(); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "gen:", err)
	os.Exit(1)
}

func itoa(i int64) string { return strconv.FormatInt(i, 10) }

// scale holds the table sizes of one scale factor (clause 4.2.5).
type scale struct {
	suppliers, customers, parts, orders, clerks int64
}

func scaled(sf float64) scale {
	n := func(base float64) int64 { return max(int64(base*sf), 1) }
	return scale{suppliers: n(10_000), customers: n(150_000), parts: n(200_000), orders: n(1_500_000), clerks: n(1_000)}
}

// retailPrice is the spec's p_retailprice in cents.
func retailPrice(partkey int64) int64 {
	return 90000 + (partkey/10)%20001 + 100*(partkey%1000)
}

// partSupplier is the spec's i-th (0..3) supplier of a part.
func partSupplier(partkey, i, suppliers int64) int64 {
	return (partkey+(i*((suppliers/4)+(partkey-1)/suppliers)))%suppliers + 1
}

func main() {
	sf := flag.Float64("sf", 1, "scale factor (1 = lineitem about 6M rows, about 1 GB of CSV)")
	dir := flag.String("dir", "", "output directory (created)")
	seed := flag.Uint64("seed", 19, "random seed")
	flag.Parse()
	if *dir == "" || *sf <= 0 {
		fmt.Fprintln(os.Stderr, "usage: gen -sf SF -dir DIR [-seed S]")
		os.Exit(2)
	}
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		fail(err)
	}
	s := scaled(*sf)
	r := &rng{splitmix.Rand{S: *seed}}
	writeRegionNation(*dir, r)
	writeSupplier(*dir, r, s)
	writeCustomer(*dir, r, s)
	writePart(*dir, r, s)
	writeOrders(*dir, r, s)
}

func writeRegionNation(dir string, r *rng) {
	t := create(dir, "region", "r_regionkey,r_name,r_comment")
	for i, name := range regions {
		t.row(itoa(int64(i)), name, r.text(31, 115))
	}
	t.close()
	t = create(dir, "nation", "n_nationkey,n_name,n_regionkey,n_comment")
	for i, n := range nations {
		t.row(itoa(int64(i)), n.name, itoa(int64(n.region)), r.text(31, 114))
	}
	t.close()
}

func writeSupplier(dir string, r *rng, s scale) {
	t := create(dir, "supplier", "s_suppkey,s_name,s_address,s_nationkey,s_phone,s_acctbal,s_comment")
	// clause 4.2.3: 5 suppliers per 10,000 carry "Customer ... Complaints",
	// 5 "Customer ... Recommends".
	special := max(s.suppliers*5/10_000, 1)
	for k := int64(1); k <= s.suppliers; k++ {
		nation := int(r.between(0, 24))
		comment := r.text(25, 100)
		switch {
		case k%(s.suppliers/special+1) == 7:
			comment = r.pick(words) + " Customer " + r.pick(words) + " Complaints " + r.pick(words)
		case k%(s.suppliers/special+1) == 13:
			comment = r.pick(words) + " Customer " + r.pick(words) + " Recommends " + r.pick(words)
		}
		t.row(itoa(k), fmt.Sprintf("Supplier#%09d", k), r.vstring(10, 40), itoa(int64(nation)),
			r.phone(nation), money(r.between(-99999, 999999)), comment)
	}
	t.close()
}

func writeCustomer(dir string, r *rng, s scale) {
	t := create(dir, "customer", "c_custkey,c_name,c_address,c_nationkey,c_phone,c_acctbal,c_mktsegment,c_comment")
	for k := int64(1); k <= s.customers; k++ {
		nation := int(r.between(0, 24))
		t.row(itoa(k), fmt.Sprintf("Customer#%09d", k), r.vstring(10, 40), itoa(int64(nation)),
			r.phone(nation), money(r.between(-99999, 999999)), r.pick(segments), r.text(29, 116))
	}
	t.close()
}

func writePart(dir string, r *rng, s scale) {
	t := create(dir, "part", "p_partkey,p_name,p_mfgr,p_brand,p_type,p_size,p_container,p_retailprice,p_comment")
	ps := create(dir, "partsupp", "ps_partkey,ps_suppkey,ps_availqty,ps_supplycost,ps_comment")
	for k := int64(1); k <= s.parts; k++ {
		name := make([]string, 0, 5)
		for len(name) < 5 {
			c := r.pick(colors)
			dup := false
			for _, x := range name {
				dup = dup || x == c
			}
			if !dup {
				name = append(name, c)
			}
		}
		m := r.between(1, 5)
		t.row(itoa(k), strings.Join(name, " "), fmt.Sprintf("Manufacturer#%d", m),
			fmt.Sprintf("Brand#%d%d", m, r.between(1, 5)),
			r.pick(typeS1)+" "+r.pick(typeS2)+" "+r.pick(typeS3), itoa(r.between(1, 50)),
			r.pick(contS1)+" "+r.pick(contS2), money(retailPrice(k)), r.text(5, 22))
		for i := range int64(4) {
			ps.row(itoa(k), itoa(partSupplier(k, i, s.suppliers)), itoa(r.between(1, 9999)),
				money(r.between(100, 100000)), r.text(49, 198))
		}
	}
	t.close()
	ps.close()
}

func writeOrders(dir string, r *rng, s scale) {
	o := create(dir, "orders", "o_orderkey,o_custkey,o_orderstatus,o_totalprice,o_orderdate,o_orderpriority,o_clerk,o_shippriority,o_comment")
	l := create(dir, "lineitem", "l_orderkey,l_partkey,l_suppkey,l_linenumber,l_quantity,l_extendedprice,l_discount,l_tax,l_returnflag,l_linestatus,l_shipdate,l_commitdate,l_receiptdate,l_shipinstruct,l_shipmode,l_comment")
	orderDays := int64(lastOrder.Sub(startDate).Hours() / 24)
	for i := int64(1); i <= s.orders; i++ {
		key := (i-1)/8*32 + (i-1)%8 + 1
		cust := r.between(1, s.customers)
		for cust%3 == 0 && s.customers > 2 {
			cust = r.between(1, s.customers)
		}
		odate := startDate.AddDate(0, 0, int(r.between(0, orderDays)))
		lines := r.between(1, 7)
		var total float64
		nF, nO := 0, 0
		for ln := int64(1); ln <= lines; ln++ {
			part := r.between(1, s.parts)
			supp := partSupplier(part, r.between(0, 3), s.suppliers)
			qty := r.between(1, 50)
			ext := qty * retailPrice(part) // cents
			disc := r.between(0, 10)       // hundredths
			tax := r.between(0, 8)
			ship := odate.AddDate(0, 0, int(r.between(1, 121)))
			commit := odate.AddDate(0, 0, int(r.between(30, 90)))
			receipt := ship.AddDate(0, 0, int(r.between(1, 30)))
			flag := "N"
			if !receipt.After(currentDate) {
				flag = r.pick([]string{"R", "A"})
			}
			status := "F"
			if ship.After(currentDate) {
				status = "O"
				nO++
			} else {
				nF++
			}
			total += float64(ext) / 100 * (1 + float64(tax)/100) * (1 - float64(disc)/100)
			l.row(itoa(key), itoa(part), itoa(supp), itoa(ln), itoa(qty), money(ext),
				money(disc), money(tax), flag, status, day(ship), day(commit), day(receipt),
				r.pick(instructs), r.pick(modes), r.text(10, 43))
		}
		ostatus := "P"
		switch {
		case nO == 0:
			ostatus = "F"
		case nF == 0:
			ostatus = "O"
		}
		comment := r.text(19, 78)
		if r.between(1, 100) == 1 { // about 1% of orders mention special requests (Q13)
			comment = r.pick(words) + " special " + r.pick(words) + " requests " + r.pick(words)
		}
		o.row(itoa(key), itoa(cust), ostatus, money(int64(total*100+0.5)), day(odate), r.pick(priorities),
			fmt.Sprintf("Clerk#%09d", r.between(1, s.clerks)), "0", comment)
	}
	o.close()
	l.close()
}
