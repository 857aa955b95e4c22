package fake

// Static master data of the fake services. Everything here is read-only
// after package initialisation; the generator only reads it.

// modelSpec is one make/model of the fake catalog.
type modelSpec struct {
	make, model string
	catalog     string   // auto, vcom, vind
	trims       []string // one catalog version per trim
	price       [2]int   // used sale price range in EUR, VAT included
	fee         int      // base NLT monthly fee in EUR
	upfits      []string // upfit slugs this model is sold with (vcom/vind)
}

var models = []modelSpec{
	// Cars.
	{"Fiat", "Panda", "auto", []string{"1.0 Hybrid City Life", "1.0 Hybrid Cross", "1.2 Easy"}, [2]int{7900, 15900}, 229, nil},
	{"Fiat", "500", "auto", []string{"1.0 Hybrid Dolcevita", "1.0 Hybrid Cult", "e 42 kWh La Prima"}, [2]int{9900, 21900}, 259, nil},
	{"Fiat", "Tipo", "auto", []string{"1.6 Multijet Life", "1.5 Hybrid DCT Cross"}, [2]int{11900, 21900}, 289, nil},
	{"Volkswagen", "Golf", "auto", []string{"1.5 eTSI 150 CV Life", "2.0 TDI 115 CV Style", "1.5 TSI R-Line"}, [2]int{15900, 31900}, 379, nil},
	{"Volkswagen", "T-Roc", "auto", []string{"1.0 TSI Life", "2.0 TDI 150 CV Sport"}, [2]int{17900, 30900}, 399, nil},
	{"Peugeot", "3008", "auto", []string{"1.2 PureTech 130 Allure", "1.5 BlueHDi 130 GT", "Hybrid 136 e-DCS6 Allure"}, [2]int{18900, 34900}, 419, nil},
	{"Peugeot", "208", "auto", []string{"1.2 PureTech 75 Active", "1.2 PureTech 100 GT"}, [2]int{10900, 20900}, 279, nil},
	{"Alfa Romeo", "Tonale", "auto", []string{"1.5 Hybrid 160 CV Sprint", "1.6 Diesel 130 CV Ti", "1.3 Plug-in Hybrid Q4 Veloce"}, [2]int{26900, 44900}, 489, nil},
	{"Jeep", "Renegade", "auto", []string{"1.5 e-Hybrid Limited", "1.3 T4 4xe S"}, [2]int{17900, 32900}, 379, nil},
	{"Jeep", "Compass", "auto", []string{"1.3 T4 PHEV 4xe Limited", "1.6 Multijet Longitude"}, [2]int{21900, 38900}, 449, nil},
	{"Toyota", "Yaris", "auto", []string{"1.5 Hybrid Trend", "1.5 Hybrid Lounge", "1.0 Active"}, [2]int{12900, 23900}, 299, nil},
	{"Toyota", "Yaris Cross", "auto", []string{"1.5 Hybrid Active", "1.5 Hybrid AWD-i Premiere"}, [2]int{19900, 31900}, 369, nil},
	{"Renault", "Clio", "auto", []string{"1.0 TCe 90 Evolution", "E-Tech Full Hybrid 145 Esprit Alpine"}, [2]int{10900, 22900}, 269, nil},
	{"Dacia", "Sandero", "auto", []string{"Streetway 1.0 TCe Expression", "Stepway 1.0 ECO-G Extreme"}, [2]int{8900, 16900}, 219, nil},
	{"Ford", "Puma", "auto", []string{"1.0 EcoBoost Hybrid Titanium", "1.0 EcoBoost Hybrid ST-Line X"}, [2]int{15900, 27900}, 339, nil},
	{"Lancia", "Ypsilon", "auto", []string{"1.0 FireFly Hybrid Gold", "1.2 Silver"}, [2]int{8900, 17900}, 239, nil},
	{"Audi", "A3 Sportback", "auto", []string{"35 TFSI S line edition", "30 TDI Business"}, [2]int{21900, 37900}, 459, nil},
	{"BMW", "Serie 1", "auto", []string{"118d Msport", "116i Advantage"}, [2]int{19900, 35900}, 449, nil},
	{"Citroen", "C3", "auto", []string{"1.2 PureTech 83 Shine", "1.5 BlueHDi 100 Feel"}, [2]int{9900, 18900}, 249, nil},
	{"Hyundai", "Tucson", "auto", []string{"1.6 HEV 2WD XLine", "1.6 CRDi 48V Xtech"}, [2]int{21900, 36900}, 429, nil},

	// Light commercial vehicles.
	{"Fiat", "Ducato", "vcom", []string{"35 MH2 2.2 Mjt 140 CV", "33 L2H2 2.2 Mjt 120 CV", "35 LH2 2.2 Mjt 180 CV Maxi"}, [2]int{19900, 38900}, 469,
		[]string{"furgone-isotermico", "frigo", "officina-mobile", "cassonato", "altro"}},
	{"Fiat", "Doblo", "vcom", []string{"Cargo 1.5 BlueHDi 100 CV", "Cargo Maxi 1.5 BlueHDi 130 CV"}, [2]int{13900, 24900}, 329,
		[]string{"furgone-isotermico", "officina-mobile", "altro"}},
	{"Ford", "Transit", "vcom", []string{"350 L3H2 2.0 EcoBlue 130 CV Trend", "Custom 300 L1H1 2.0 EcoBlue Trend"}, [2]int{21900, 41900}, 489,
		[]string{"furgone-isotermico", "frigo", "officina-mobile", "cassonato", "altro"}},
	{"Renault", "Master", "vcom", []string{"T35 2.3 dCi 150 L2H2", "T35 2.3 dCi 135 L3H2"}, [2]int{19900, 36900}, 449,
		[]string{"furgone-isotermico", "frigo", "cassonato", "ribaltabile", "altro"}},
	{"Citroen", "Jumper", "vcom", []string{"35 L3H2 BlueHDi 140", "33 L2H2 BlueHDi 120"}, [2]int{18900, 34900}, 439,
		[]string{"furgone-isotermico", "frigo", "officina-mobile", "altro"}},
	{"Peugeot", "Boxer", "vcom", []string{"335 L3H2 BlueHDi 140 S&S", "333 L2H2 BlueHDi 120"}, [2]int{18900, 34900}, 439,
		[]string{"furgone-isotermico", "cassonato", "ribaltabile", "altro"}},
	{"Mercedes-Benz", "Sprinter", "vcom", []string{"314 CDI L2H2", "317 CDI 43/35 RWD", "519 CDI L3H2"}, [2]int{27900, 54900}, 589,
		[]string{"furgone-isotermico", "frigo", "officina-mobile", "cassonato", "altro"}},
	{"Volkswagen", "Crafter", "vcom", []string{"35 2.0 TDI 140 CV L3H3", "35 2.0 TDI 177 CV 4Motion"}, [2]int{26900, 49900}, 569,
		[]string{"furgone-isotermico", "frigo", "officina-mobile", "altro"}},
	{"Iveco", "Daily", "vcom", []string{"35S14 2.3 HPT 136 CV", "35S16 3.0 160 CV Hi-Matic"}, [2]int{24900, 46900}, 529,
		[]string{"furgone-isotermico", "frigo", "cassonato", "ribaltabile", "altro"}},
	{"Toyota", "Proace", "vcom", []string{"2.0 D-4D 145 CV L1 Comfort", "Electric 75 kWh L2"}, [2]int{21900, 39900}, 459,
		[]string{"furgone-isotermico", "officina-mobile", "altro"}},

	// Industrial vehicles.
	{"Iveco", "Daily", "vind", []string{"70C18 3.0 180 CV cabinato", "72C21 3.0 210 CV Hi-Matic"}, [2]int{39900, 79900}, 0,
		[]string{"cassonato", "ribaltabile", "gru", "frigo", "piattaforma-aerea", "altro"}},
	{"Iveco", "Eurocargo", "vind", []string{"120E25 cabinato", "75E21 Tector 5"}, [2]int{54900, 109900}, 0,
		[]string{"cassonato", "ribaltabile", "gru", "centinato", "frigo", "altro"}},
	{"Isuzu", "M21", "vind", []string{"M21 3.0 150 CV passo corto", "NPR 85 3.0 L"}, [2]int{32900, 59900}, 0,
		[]string{"cassonato", "ribaltabile", "gru", "altro"}},
	{"Mitsubishi Fuso", "Canter", "vind", []string{"7C15 3.0 150 CV", "9C18 Duonic"}, [2]int{36900, 69900}, 0,
		[]string{"cassonato", "ribaltabile", "piattaforma-aerea", "frigo", "altro"}},
	{"Mercedes-Benz", "Atego", "vind", []string{"1224 L cabinato", "1530 L BlueTec 6"}, [2]int{59900, 119900}, 0,
		[]string{"cassonato", "centinato", "gru", "frigo", "altro"}},
	{"MAN", "TGL", "vind", []string{"12.220 4x2 BL", "8.190 4x2 BB"}, [2]int{54900, 104900}, 0,
		[]string{"cassonato", "centinato", "gru", "ribaltabile", "altro"}},
	{"Renault Trucks", "D Wide", "vind", []string{"D 18 Wide 320 CV", "D 12 240 CV"}, [2]int{59900, 114900}, 0,
		[]string{"centinato", "frigo", "gru", "altro"}},
}

// upfitSpec is one entry of the professional-upfit taxonomy (catalog
// master data). Slugs are canonical.
type upfitSpec struct {
	code, slug, label, family string
}

var upfitTaxonomy = []upfitSpec{
	{"UPF-ISO", "furgone-isotermico", "Furgone isotermico", "Trasporto refrigerato"},
	{"UPF-FRG", "frigo", "Frigo", "Trasporto refrigerato"},
	{"UPF-CAS", "cassonato", "Cassonato", "Cassoni"},
	{"UPF-RIB", "ribaltabile", "Ribaltabile", "Cassoni"},
	{"UPF-CEN", "centinato", "Centinato", "Cassoni"},
	{"UPF-GRU", "gru", "Gru", "Sollevamento"},
	{"UPF-PIA", "piattaforma-aerea", "Piattaforma aerea", "Sollevamento"},
	{"UPF-OFM", "officina-mobile", "Officina mobile", "Allestimenti speciali"},
	{"UPF-ALT", "altro", "Altro", "Altro"},
}

// altroAliases are dealer wordings of the "Altro" upfit.
var altroAliases = []string{"Allestimento su misura", "Trasporto cavalli", "Negozio mobile", "Allestimento per disabili", "Spargisale"}

// equipSpec is one equipment item of a pool.
type equipSpec struct {
	name, category string
	price          int // list price of optionals, EUR
}

var standardPool = map[string][]equipSpec{
	"auto": {
		{"Climatizzatore automatico bizona", "comfort", 0}, {"Cruise control adattivo", "assistenza", 0},
		{"Sensori di parcheggio posteriori", "assistenza", 0}, {"Apple CarPlay e Android Auto", "infotainment", 0},
		{"Fari full LED", "esterni", 0}, {"Cerchi in lega 17\"", "esterni", 0},
		{"Frenata automatica d'emergenza", "sicurezza", 0}, {"Mantenimento attivo della corsia", "sicurezza", 0},
		{"Retrocamera", "assistenza", 0}, {"Accesso e avviamento keyless", "comfort", 0},
		{"Volante multifunzione in pelle", "interni", 0}, {"Display touchscreen 10\"", "infotainment", 0},
		{"Airbag frontali, laterali e a tendina", "sicurezza", 0}, {"Riconoscimento segnali stradali", "sicurezza", 0},
	},
	"vcom": {
		{"Paratia divisoria con finestra", "vano di carico", 0}, {"Porta laterale scorrevole destra", "carrozzeria", 0},
		{"Climatizzatore manuale", "comfort", 0}, {"Radio DAB con Bluetooth", "infotainment", 0},
		{"Cruise control", "assistenza", 0}, {"Sensori di parcheggio posteriori", "assistenza", 0},
		{"Ganci fermacarico a pavimento", "vano di carico", 0}, {"Hill holder", "sicurezza", 0},
		{"ESP con Traction+", "sicurezza", 0}, {"Sedile passeggero biposto", "interni", 0},
	},
	"vind": {
		{"Presa di forza", "allestimento", 0}, {"Cronotachigrafo digitale", "omologazione", 0},
		{"Sedile conducente molleggiato", "interni", 0}, {"Freno motore", "sicurezza", 0},
		{"Serbatoio AdBlue", "motore", 0}, {"Climatizzatore", "comfort", 0},
		{"Specchi retrovisori riscaldati elettrici", "esterni", 0}, {"Limitatore di velocita", "omologazione", 0},
		{"ABS ed EBS", "sicurezza", 0},
	},
}

var optionalPool = map[string][]equipSpec{
	"auto": {
		{"Vernice metallizzata", "esterni", 750}, {"Tetto panoramico apribile", "esterni", 1200},
		{"Navigatore satellitare connesso", "infotainment", 900}, {"Gancio traino estraibile", "esterni", 650},
		{"Telecamera a 360 gradi", "assistenza", 800}, {"Sedili anteriori riscaldabili", "comfort", 450},
		{"Impianto audio premium", "infotainment", 700}, {"Head-up display", "infotainment", 500},
		{"Ruotino di scorta", "esterni", 150}, {"Portellone posteriore elettrico", "comfort", 550},
		{"Vetri posteriori oscurati", "esterni", 300}, {"Cerchi in lega 18\"", "esterni", 600},
	},
	"vcom": {
		{"Rivestimento in legno del vano di carico", "vano di carico", 490}, {"Porta laterale scorrevole sinistra", "carrozzeria", 650},
		{"Gancio traino", "esterni", 700}, {"Navigatore", "infotainment", 800},
		{"Portapacchi da tetto", "esterni", 550}, {"Telecamera posteriore", "assistenza", 400},
		{"Riscaldatore autonomo", "comfort", 1200}, {"Sedile conducente ammortizzato", "interni", 350},
	},
	"vind": {
		{"Gru idraulica predisposizione", "allestimento", 2500}, {"Sospensioni pneumatiche posteriori", "telaio", 3200},
		{"Spoiler cabina", "esterni", 900}, {"Cassetta attrezzi laterale", "allestimento", 350},
		{"Climatizzatore automatico", "comfort", 1400}, {"Frigorifero in cabina", "interni", 450},
		{"Faro rotante arancione", "esterni", 250}, {"Telecamera retromarcia", "assistenza", 600},
	},
}

var packagePool = map[string][]string{
	"auto": {"Pack Comfort", "Pack Tech", "Pack Winter", "Pack Safety Plus", "Pack Style"},
	"vcom": {"Pack Cargo", "Pack Work", "Pack Comfort", "Pack Sicurezza"},
	"vind": {"Pack Cantiere", "Pack Long Distance", "Pack Sicurezza"},
}

// dealerSpec is one dealer of the fake dealers service with its inventory
// sizes.
type dealerSpec struct {
	id                                  int64
	name, brand, city, province, domain string
	rewind, nos, nlt                    int
}

var dealerSpecs = []dealerSpec{
	{101, "Autosalone Alpha S.r.l.", "Alpha Motori", "Milano", "MI", "www.alphamotori.it", 330, 215, 64},
	{102, "Beta Car S.p.A.", "BetaCar", "Roma", "RM", "www.betacar.it", 80, 40, 20},
	{103, "Gamma Veicoli S.r.l.", "Gamma Auto", "Torino", "TO", "www.gammaauto.it", 60, 30, 20},
}
