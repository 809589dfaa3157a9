// Command gen writes Quarry's bundled demo datasets into demodata/files.
//
// The output is deterministic: every dataset has its own fixed-seed PCG
// generator, and nothing depends on the clock or the environment. Regenerate
// with
//
//	go run ./demodata/gen
//
// from the repository root (or pass -out DIR). Changing the output changes
// the content hash demodata.Extract uses, so old extracted copies are simply
// left behind in the cache.
package main

import (
	"compress/gzip"
	"encoding/csv"
	"flag"
	"fmt"
	"io"
	"log"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

func main() {
	out := flag.String("out", filepath.Join("demodata", "files"), "output directory")
	flag.Parse()
	if err := generate(*out, os.Stdout); err != nil {
		log.Fatal(err)
	}
}

// datasets lists every generated file: its path under the output
// directory, its generator and whether it is tab separated.
var datasets = []struct {
	path string
	fn   func(*rand.Rand) [][]string
	tsv  bool
}{
	{"weather/stations.csv", genStations, false},
	{"weather/daily.csv", genDaily, false},
	{"sales/orders.csv", genOrders, false},
	{"sensors/readings.csv.gz", genReadings, false},
	{"survey/wide.tsv", genSurvey, true},
	{"budget/2024/expenses.csv", genBudget, false},
}

// generate writes every dataset under out and a summary line each to log.
func generate(out string, log io.Writer) error {
	for i, g := range datasets {
		rng := rand.New(rand.NewPCG(0x5175617272790000+uint64(i), 0xDA7A))
		rows := g.fn(rng)
		if err := write(filepath.Join(out, filepath.FromSlash(g.path)), rows, g.tsv); err != nil {
			return fmt.Errorf("%s: %w", g.path, err)
		}
		fmt.Fprintf(log, "%-28s %7d rows\n", g.path, len(rows)-1)
	}
	return nil
}

// write stores rows (header first) as CSV/TSV, gzipped when the name ends in .gz.
func write(path string, rows [][]string, tsv bool) (err error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}()
	var w io.Writer = f
	var zw *gzip.Writer
	if strings.HasSuffix(path, ".gz") {
		// No name or mtime in the header: the bytes depend only on the data.
		zw, err = gzip.NewWriterLevel(f, gzip.BestCompression)
		if err != nil {
			return err
		}
		w = zw
	}
	cw := csv.NewWriter(w)
	if tsv {
		cw.Comma = '\t'
	}
	if err := cw.WriteAll(rows); err != nil {
		return err
	}
	if zw != nil {
		return zw.Close()
	}
	return nil
}

func pick[T any](r *rand.Rand, xs []T) T { return xs[r.IntN(len(xs))] }

func ftoa(v float64, prec int) string {
	s := strconv.FormatFloat(v, 'f', prec, 64)
	if s == "-0" || strings.Trim(s, "-0.") == "" && strings.HasPrefix(s, "-") {
		s = s[1:]
	}
	return s
}

type station struct {
	id, name, country string
	lat, lon          float64
	elev              int // -1: unknown
	opened            string
}

// stations: 20 Armenian stations and 20 elsewhere, names in local scripts.
var stations = []station{
	{"AM01", "Երևան", "Armenia", 40.1811, 44.5136, 990, "1890-01-01"},
	{"AM02", "Գյումրի", "Armenia", 40.7894, 43.8475, 1529, "1891-06-15"},
	{"AM03", "Վանաձոր", "Armenia", 40.8128, 44.4883, 1350, "1920-03-01"},
	{"AM04", "Վաղարշապատ", "Armenia", 40.1619, 44.2886, 853, "1935-05-20"},
	{"AM05", "Հրազդան", "Armenia", 40.4972, 44.7667, 1750, "1951-07-01"},
	{"AM06", "Աբովյան", "Armenia", 40.2739, 44.6256, 1400, "1963-04-12"},
	{"AM07", "Կապան", "Armenia", 39.2075, 46.4058, 910, "1932-09-01"},
	{"AM08", "Արմավիր", "Armenia", 40.1500, 44.0389, 870, "1948-02-01"},
	{"AM09", "Գավառ", "Armenia", 40.3589, 45.1267, 1982, "1927-08-15"},
	{"AM10", "Արտաշատ", "Armenia", 39.9539, 44.5506, 830, "1958-01-10"},
	{"AM11", "Իջևան", "Armenia", 40.8756, 45.1492, 733, "1936-11-01"},
	{"AM12", "Գորիս", "Armenia", 39.5111, 46.3417, 1398, "1929-06-01"},
	{"AM13", "Սևան", "Armenia", 40.5492, 44.9486, 1925, "1933-05-01"},
	{"AM14", "Ջերմուկ", "Armenia", 39.8417, 45.6722, 2080, "1961-09-01"},
	{"AM15", "Դիլիջան", "Armenia", 40.7406, 44.8636, 1256, "1925-04-01"},
	{"AM16", "Ստեփանավան", "Armenia", 41.0075, 44.3867, 1397, "1939-10-01"},
	{"AM17", "Մեղրի", "Armenia", 38.9000, 46.2450, 610, "1950-03-15"},
	{"AM18", "Աշտարակ", "Armenia", 40.2994, 44.3619, 1090, "1957-07-01"},
	{"AM19", "Եղեգնաձոր", "Armenia", 39.7611, 45.3333, -1, "1966-05-01"},
	{"AM20", "Արագած (լեռնային)", "Armenia", 40.4719, 44.1808, 3229, "1943-08-01"},
	{"GE01", "თბილისი", "Georgia", 41.7151, 44.8271, 490, "1844-01-01"},
	{"GE02", "ბათუმი", "Georgia", 41.6168, 41.6367, 6, "1881-01-01"},
	{"RU01", "Москва", "Russia", 55.7558, 37.6173, 156, "1879-01-01"},
	{"UA01", "Київ", "Ukraine", 50.4501, 30.5234, -1, "1881-01-01"},
	{"KZ01", "Алматы", "Kazakhstan", 43.2220, 76.8512, 848, "1915-01-01"},
	{"GR01", "Αθήνα", "Greece", 37.9838, 23.7275, 107, "1890-01-01"},
	{"TR01", "İstanbul", "Türkiye", 41.0082, 28.9784, 39, "1911-01-01"},
	{"IR01", "تبریز", "Iran", 38.0800, 46.2919, 1361, "1951-01-01"},
	{"IL01", "ירושלים", "Israel", 31.7683, 35.2137, -1, "1950-01-01"},
	{"PL01", "Łódź", "Poland", 51.7592, 19.4560, 190, "1921-01-01"},
	{"CZ01", "Plzeň", "Czechia", 49.7384, 13.3736, 310, "1923-01-01"},
	{"IS01", "Reykjavík", "Iceland", 64.1466, -21.9426, 52, "1920-01-01"},
	{"NO01", "Tromsø", "Norway", 69.6492, 18.9553, 100, "1920-01-01"},
	{"DE01", "München", "Germany", 48.1351, 11.5820, 520, "1879-01-01"},
	{"FR01", "Besançon", "France", 47.2378, 6.0241, 307, "1884-01-01"},
	{"JP01", "東京", "Japan", 35.6762, 139.6503, 25, "1875-06-01"},
	{"KR01", "서울", "South Korea", 37.5665, 126.9780, 86, "1907-10-01"},
	{"IN01", "मुंबई", "India", 19.0760, 72.8777, -1, "1926-01-01"},
	{"US01", "Seattle", "United States", 47.6062, -122.3321, 56, "1945-01-01"},
	{"CL01", "Punta Arenas", "Chile", -53.1638, -70.9171, 37, "1927-01-01"},
}

func genStations(_ *rand.Rand) [][]string {
	rows := [][]string{{"station_id", "name", "country", "lat", "lon", "elevation_m", "opened"}}
	for _, s := range stations {
		elev := ""
		if s.elev >= 0 {
			elev = strconv.Itoa(s.elev)
		}
		rows = append(rows, []string{s.id, s.name, s.country, ftoa(s.lat, 4), ftoa(s.lon, 4), elev, s.opened})
	}
	return rows
}

// genDaily: every station, every fourth day of 2024 (92 days).
func genDaily(r *rand.Rand) [][]string {
	rows := [][]string{{"station_id", "date", "tmin_c", "tmax_c", "precip_mm", "snow"}}
	start := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, s := range stations {
		elev := float64(max(s.elev, 500))
		// Mean annual temperature from latitude and elevation; seasons flip south of the equator.
		mean := 28 - 0.45*math.Abs(s.lat) - 0.0055*elev
		amp := 4 + 0.25*math.Abs(s.lat)
		if s.lat < 0 {
			amp = -amp
		}
		wet := 0.18 + 0.2*r.Float64()
		for d := range 92 {
			day := start.AddDate(0, 0, 4*d)
			season := -math.Cos(2 * math.Pi * float64(d*4-15) / 366) // one reading every 4 days over the year
			tmid := mean + amp*season + r.NormFloat64()*2.5
			spread := 6 + 4*r.Float64()
			tmin, tmax := tmid-spread/2, tmid+spread/2
			precip, snow := "", ""
			if r.Float64() >= 0.03 { // 3% of days are missing a precipitation reading
				p := 0.0
				if r.Float64() < wet {
					p = r.ExpFloat64() * 6
				}
				precip = ftoa(p, 1)
				snow = strconv.FormatBool(p >= 0.1 && tmax < 1.5)
			}
			rows = append(rows, []string{s.id, day.Format("2006-01-02"), ftoa(tmin, 1), ftoa(tmax, 1), precip, snow})
		}
	}
	return rows
}

var regions = []string{"Yerevan", "Shirak", "Lori", "Tavush", "Syunik", "Kotayk", "Ararat", "Armavir", "Aragatsotn", "Gegharkunik", "Vayots Dzor"}

var customers = []string{
	"Անի Սարգսյան", "Արամ Պետրոսյան", "Նարեկ Հակոբյան", "Լիլիթ Գրիգորյան", "Մարիամ Մանուկյան",
	"Davit Avetisyan", "Tatevik Harutyunyan", "O'Brien, Pat", "Ayşe Yılmaz", "Zoë Müller",
	"Nino Beridze", "Иван Петров", "李伟", "María José García", "Jean-Luc Picard",
	"Ararat Cognac LLC", "\"Noyan\" Juice Co.", "Yerevan State University", "Smith & Sons, Ltd.", "Gohar Karapetyan",
}

var products = []struct{ name, category string }{
	{"Apricot jam 450g", "grocery"}, {"Lavash (pack of 5)", "grocery"}, {"Gata pastry", "grocery"},
	{"Dried fruit mix", "grocery"}, {"Brandy 0.5L", "beverages"}, {"Jermuk mineral water 0.5L", "beverages"},
	{"Pomegranate wine 0.75L", "beverages"}, {"Coffee, Armenian roast 250g", "beverages"},
	{"Carpet 2x3m", "home"}, {"Ceramic bowl", "home"}, {"Copper jezve", "home"}, {"Backgammon set (nardi)", "home"},
	{"Laptop 14\"", "electronics"}, {"USB-C charger", "electronics"}, {"Headphones", "electronics"},
	{"E-reader", "electronics"}, {"Hiking boots", "outdoor"}, {"Tent, 2 person", "outdoor"}, {"Trekking poles", "outdoor"},
}

var notes = []string{
	"Deliver after 6pm, ring twice",
	"Customer said \"urgent\" — call before delivery",
	"Առաքել երեկոյան, զանգահարել նախօրոք",
	"Gift wrap, please; no invoice in the box",
	"Second floor, door code 1234",
	"Վճարումը կանխիկ, առաքիչին",
	"Leave with the neighbour (apt. 12)\nif nobody answers",
	"Repeat order, same as last month",
	"Fragile — glass!",
	"Call: +374 10 123456",
}

func genOrders(r *rand.Rand) [][]string {
	rows := [][]string{{"order_id", "ordered_at", "customer", "region", "product", "category", "qty", "unit_price", "discount", "note"}}
	start := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	prices := make([]float64, len(products))
	for i := range prices {
		prices[i] = math.Round((2+r.Float64()*400)*100) / 100
	}
	t := start
	for i := range 1500 {
		t = t.Add(time.Duration(r.ExpFloat64() * float64(350*time.Minute)))
		ts := t.Format("2006-01-02T15:04:05Z")
		if r.IntN(4) == 0 {
			ts = t.Add(time.Duration(r.IntN(1000)) * time.Millisecond).Format("2006-01-02T15:04:05.000Z")
		}
		p := r.IntN(len(products))
		qty := 1 + int(r.ExpFloat64()*2)
		if products[p].category == "electronics" || products[p].category == "home" {
			qty = 1 + r.IntN(2)
		}
		discount := ""
		if r.Float64() < 0.35 {
			discount = pick(r, []string{"0.05", "0.1", "0.15", "0.2", "0.25"})
		}
		note := ""
		if r.Float64() < 0.2 {
			note = pick(r, notes)
		}
		rows = append(rows, []string{
			strconv.Itoa(100001 + i), ts, pick(r, customers), pick(r, regions),
			products[p].name, products[p].category, strconv.Itoa(qty),
			ftoa(prices[p]*(0.9+0.2*r.Float64()), 2), discount, note,
		})
	}
	return rows
}

// genReadings: exactly 100,000 rows, ids 1..100000: 50 sensors read once a
// minute (2,000 minutes, about 33 hours).
func genReadings(r *rand.Rand) [][]string {
	rows := make([][]string, 0, 100001)
	rows = append(rows, []string{"id", "sensor", "ts", "value", "status"})
	start := time.Date(2024, 6, 1, 0, 0, 0, 0, time.UTC)
	base := make([]float64, 50)
	for i := range base {
		base[i] = 15 + r.Float64()*10
	}
	for id := 1; id <= 100000; id++ {
		s := (id - 1) % 50
		ts := start.Add(time.Duration((id-1)/50) * time.Minute)
		hour := float64(ts.Hour()) + float64(ts.Minute())/60
		v := base[s] + 3*math.Sin(2*math.Pi*(hour-9)/24)
		status, value := "ok", ftoa(v, 1)
		switch x := r.Float64(); {
		case x < 0.005:
			status, value = "fail", ""
		case x < 0.03:
			status = "warn"
			value = ftoa(v+r.NormFloat64()*5, 1)
		}
		rows = append(rows, []string{strconv.Itoa(id), fmt.Sprintf("S-%03d", s+1), ts.Format("2006-01-02 15:04:05"), value, status})
	}
	return rows
}

var marzer = []string{"Երևան", "Շիրակ", "Լոռի", "Տավուշ", "Սյունիք", "Կոտայք", "Արարատ", "Արմավիր", "Արագածոտն", "Գեղարքունիք", "Վայոց ձոր"}

var comments = []string{
	"", "", "", "", "Good service", "Too expensive, but fine", "Շատ գոհ եմ", "Would recommend to \"everyone\"",
	"No comment", "Հերթերը երկար են", "Website is slow; app is ok", "—",
}

// genSurvey: 500 respondents × 60 columns of mixed types, tab separated.
func genSurvey(r *rand.Rand) [][]string {
	header := []string{
		"respondent_id", "submitted_on", "submitted_at", "age", "gender", "marz", "consent", "household_size",
		"income_amd", "height_cm", "weight_kg", "owns_car", "internet_hours", "satisfaction", "comment",
		"referral_code", "form_version", "unused",
	}
	for q := 1; len(header) < 60; q++ {
		header = append(header, fmt.Sprintf("q%02d", q))
	}
	rows := [][]string{header}
	start := time.Date(2024, 5, 1, 8, 0, 0, 0, time.UTC)
	for i := range 500 {
		at := start.Add(time.Duration(r.IntN(60*24*3600)) * time.Second)
		income := ""
		if r.Float64() > 0.12 {
			income = strconv.Itoa(60000 + r.IntN(1200)*1000)
		}
		ref := strconv.Itoa(100 + r.IntN(900)) // mostly numeric, sometimes not: a mixed column
		if r.IntN(10) == 0 {
			ref = fmt.Sprintf("A%d", r.IntN(100))
		}
		version := pick(r, []string{"1", "2", "2.5"})
		consent := pick(r, []string{"TRUE", "True", "true", "FALSE", "false"})
		row := []string{
			strconv.Itoa(i + 1), at.Format("2006-01-02"), at.Format("2006-01-02T15:04:05"),
			strconv.Itoa(18 + r.IntN(70)), pick(r, []string{"female", "male", "other", ""}), pick(r, marzer),
			consent, strconv.Itoa(1 + r.IntN(7)), income, ftoa(150+r.NormFloat64()*9+15, 1),
			ftoa(70+r.NormFloat64()*12, 1), strconv.FormatBool(r.IntN(3) == 0), ftoa(r.ExpFloat64()*3, 2),
			ftoa(1+r.Float64()*9, 1), pick(r, comments), ref, version, "",
		}
		for len(row) < len(header) {
			v := ""
			if r.Float64() > 0.05 {
				v = strconv.Itoa(1 + r.IntN(5))
			}
			row = append(row, v)
		}
		rows = append(rows, row)
	}
	return rows
}

// budgetPlaces are the regions as budget lines name them (genitive case).
var budgetPlaces = []string{
	"Երևան քաղաք", "Շիրակի մարզ", "Լոռու մարզ", "Տավուշի մարզ", "Սյունիքի մարզ", "Կոտայքի մարզ",
	"Արարատի մարզ", "Արմավիրի մարզ", "Արագածոտնի մարզ", "Գեղարքունիքի մարզ", "Վայոց ձորի մարզ",
}

var ministries = []string{
	"ՀՀ կրթության, գիտության, մշակույթի և սպորտի նախարարություն",
	"ՀՀ առողջապահության նախարարություն",
	"ՀՀ աշխատանքի և սոցիալական հարցերի նախարարություն",
	"ՀՀ տարածքային կառավարման և ենթակառուցվածքների նախարարություն",
	"ՀՀ էկոնոմիկայի նախարարություն",
	"ՀՀ շրջակա միջավայրի նախարարություն",
	"ՀՀ արդարադատության նախարարություն",
	"ՀՀ ֆինանսների նախարարություն",
	"ՀՀ բարձր տեխնոլոգիական արդյունաբերության նախարարություն",
	"ՀՀ ներքին գործերի նախարարություն",
}

// programs per ministry (same order as ministries).
var programs = [][]string{
	{"Հանրակրթական ծրագրեր", "Նախադպրոցական կրթություն", "Բարձրագույն և հետբուհական կրթություն", "Գիտական հետազոտություններ", "Մշակութային ժառանգության պահպանում", "Սպորտի զարգացում"},
	{"Առողջության առաջնային պահպանում", "Մոր և մանկան առողջություն", "Հիվանդանոցային բժշկական օգնություն", "Համաճարակաբանական հսկողություն"},
	{"Կենսաթոշակային ապահովություն", "Ընտանեկան նպաստներ", "Հաշմանդամություն ունեցող անձանց աջակցություն", "Զբաղվածության ծրագրեր"},
	{"Ճանապարհաշինություն և պահպանում", "Ջրամատակարարում և ջրահեռացում", "Համայնքների խոշորացում, տեղական ինքնակառավարում", "Ոռոգման համակարգերի արդիականացում"},
	{"Փոքր և միջին ձեռնարկատիրության աջակցություն", "Զբոսաշրջության զարգացում", "Գյուղատնտեսության սուբսիդավորում"},
	{"Անտառների վերականգնում", "Սևանա լճի պահպանում", "Թափոնների կառավարում"},
	{"Դատական համակարգի աջակցություն", "Պրոբացիայի ծառայություն", "Քրեակատարողական ծառայություն"},
	{"Պետական պարտքի սպասարկում", "Գանձապետական համակարգ", "Հարկային վարչարարության արդիականացում"},
	{"Թվային կառավարում", "ՏՏ կրթական ծրագրեր", "Ստարտափների դրամաշնորհներ"},
	{"Փրկարարական ծառայություն", "Պարեկային ծառայություն", "Միգրացիոն ծառայություն"},
}

// genBudget: 600 budget lines of 2024 (amounts in thousand AMD).
func genBudget(r *rand.Rand) [][]string {
	rows := [][]string{{"program", "ministry", "allocated", "revised", "actual"}}
	measure := 1000
	for len(rows) <= 600 {
		m := r.IntN(len(ministries))
		prog := pick(r, programs[m])
		measure += 1 + r.IntN(3)
		name := fmt.Sprintf("%s, %s (միջոցառում %d)", prog, pick(r, budgetPlaces), measure)
		if r.IntN(8) == 0 {
			name = fmt.Sprintf("%s (միջոցառում %d)", prog, measure)
		}
		alloc := int64(math.Round(math.Exp(8+r.Float64()*8))) * 10
		revised := int64(float64(alloc) * (0.85 + r.Float64()*0.3))
		actual := ""
		if r.Float64() > 0.02 {
			actual = ftoa(float64(revised)*(0.6+r.Float64()*0.42), 1)
		}
		rows = append(rows, []string{name, ministries[m], strconv.FormatInt(alloc, 10), strconv.FormatInt(revised, 10), actual})
	}
	return rows
}
