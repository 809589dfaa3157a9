package infer

// daysFromCivil is the number of days from 1970-01-01 to y-m-d in the
// proleptic Gregorian calendar (H. Hinnant's algorithm).
func daysFromCivil(y, m, d int) int64 {
	if m <= 2 {
		y--
	}
	era := y
	if era < 0 {
		era -= 399
	}
	era /= 400
	yoe := y - era*400
	mp := (m + 9) % 12
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return int64(era)*146097 + int64(doe) - 719468
}

func DaysIn(m, y int) int {
	switch m {
	case 2:
		if y%4 == 0 && (y%100 != 0 || y%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// MonthLen[m] is the length of month m (1-12) in a common year.
var MonthLen = [16]uint8{0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}

func d2(s []byte, i int) (int, bool) {
	a, b := s[i]-'0', s[i+1]-'0'
	return int(a)*10 + int(b), a <= 9 && b <= 9
}

func d4(s []byte, i int) (int, bool) {
	a, ok1 := d2(s, i)
	b, ok2 := d2(s, i+2)
	return a*100 + b, ok1 && ok2
}

// ParseDateBytes parses YYYY-MM-DD (a valid calendar date) into days since
// the epoch, accepting exactly what isDate accepts.
func ParseDateBytes(s []byte) (int32, bool) {
	if len(s) != 10 || s[4] != '-' || s[7] != '-' {
		return 0, false
	}
	y, ok1 := d4(s, 0)
	m, ok2 := d2(s, 5)
	d, ok3 := d2(s, 8)
	if !ok1 || !ok2 || !ok3 || m < 1 || m > 12 || d < 1 || d > DaysIn(m, y) {
		return 0, false
	}
	return int32(EpochDays(y, m, d)), true
}

// monthDays[(y-tableYear0)*12+m-1] is daysFromCivil(y, m, 1) for the
// years a table lookup covers.
const (
	tableYear0 = 1900
	tableYears = 201
)

var monthDays = func() []int32 {
	t := make([]int32, tableYears*12)
	for y := range tableYears {
		for m := 1; m <= 12; m++ {
			t[y*12+m-1] = int32(daysFromCivil(tableYear0+y, m, 1))
		}
	}
	return t
}()

// EpochDays is daysFromCivil for a valid date, by table when it can.
func EpochDays(y, m, d int) int64 {
	if uint(y-tableYear0) < tableYears {
		return int64(monthDays[(y-tableYear0)*12+m-1]) + int64(d-1)
	}
	return daysFromCivil(y, m, d)
}
