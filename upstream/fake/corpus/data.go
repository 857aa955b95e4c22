package corpus

// This file holds the hand-written Italian text fragments the generator
// composes records from. Placeholders in braces are replaced by expand:
// {brand}, {city}, {make}, {model}, {fuel}, {body}.

// dealerInfo is what the corpus needs to know about a demo dealer.
type dealerInfo struct {
	id       int64
	brand    string // commercial brand, used in dealer-specific text
	city     string
	province string
	domain   string // primary public domain (as the dealers service has it), used in URLs
	address  string
}

var dealers = []dealerInfo{
	{id: 101, brand: "Alpha Motori", city: "Milano", province: "MI", domain: "www.alphamotori.it", address: "viale Monza 214"},
	{id: 102, brand: "BetaCar", city: "Roma", province: "RM", domain: "www.betacar.it", address: "via Tiburtina 1020"},
	{id: 103, brand: "Gamma Auto", city: "Torino", province: "TO", domain: "www.gammaauto.it", address: "corso Giulio Cesare 310"},
}

// vehicleModel is one make/model the text talks about.
type vehicleModel struct {
	make, name string
	fuel       string // e.g. "full hybrid", "elettrica"
	body       string // with an indefinite article, e.g. "un SUV compatto"
	commercial bool
}

var vehicleModels = []vehicleModel{
	{"Fiat", "Panda", "mild hybrid", "una citycar", false},
	{"Fiat", "Grande Panda", "ibrida", "un city SUV", false},
	{"Fiat", "600e", "elettrica", "un SUV compatto", false},
	{"Fiat", "500e", "elettrica", "una citycar", false},
	{"Fiat", "Tipo", "benzina", "una berlina compatta", false},
	{"Fiat", "Ducato", "diesel", "un furgone", true},
	{"Fiat", "Doblò", "diesel", "un veicolo commerciale leggero", true},
	{"Alfa Romeo", "Junior", "ibrida", "un SUV compatto", false},
	{"Alfa Romeo", "Tonale", "ibrida plug-in", "un SUV", false},
	{"Alfa Romeo", "Giulia", "diesel", "una berlina sportiva", false},
	{"Alfa Romeo", "Stelvio", "diesel", "un SUV", false},
	{"Lancia", "Ypsilon", "ibrida", "un'utilitaria", false},
	{"Volkswagen", "Golf", "benzina", "una berlina compatta", false},
	{"Volkswagen", "T-Roc", "benzina", "un SUV compatto", false},
	{"Volkswagen", "ID.3", "elettrica", "una berlina compatta", false},
	{"Volkswagen", "Tiguan", "ibrida plug-in", "un SUV", false},
	{"Renault", "Clio", "full hybrid", "un'utilitaria", false},
	{"Renault", "Captur", "full hybrid", "un SUV compatto", false},
	{"Renault", "Austral", "full hybrid", "un SUV", false},
	{"Renault", "Trafic", "diesel", "un furgone", true},
	{"Peugeot", "208", "benzina", "un'utilitaria", false},
	{"Peugeot", "2008", "ibrida", "un SUV compatto", false},
	{"Peugeot", "e-3008", "elettrica", "un SUV", false},
	{"Toyota", "Yaris", "full hybrid", "un'utilitaria", false},
	{"Toyota", "Yaris Cross", "full hybrid", "un SUV compatto", false},
	{"Toyota", "C-HR", "ibrida plug-in", "un SUV compatto", false},
	{"Toyota", "RAV4", "full hybrid", "un SUV", false},
	{"Toyota", "Proace", "diesel", "un furgone", true},
	{"Iveco", "Daily", "diesel", "un veicolo commerciale", true},
	{"Iveco", "eDaily", "elettrica", "un veicolo commerciale", true},
	{"Ford", "Puma", "mild hybrid", "un SUV compatto", false},
	{"Ford", "Kuga", "ibrida plug-in", "un SUV", false},
	{"Ford", "Transit Custom", "diesel", "un furgone", true},
	{"Ford", "Ranger", "diesel", "un pick-up", true},
	{"Jeep", "Avenger", "ibrida", "un SUV compatto", false},
	{"Dacia", "Sandero", "GPL", "un'utilitaria", false},
	{"Dacia", "Duster", "GPL", "un SUV", false},
}

// ---------------------------------------------------------------- FAQ

type faqSeed struct {
	category string
	question string
	answer   string
}

var globalFAQ = []faqSeed{
	// acquisto
	{"acquisto", "Posso prenotare un'auto usata online?", "Sì. Dalla scheda del veicolo si può bloccare l'auto con un acconto rimborsabile: il veicolo resta riservato per sette giorni, il tempo necessario per vederlo dal vivo, provarlo e definire la formula di pagamento. Se decidi di non procedere, l'acconto viene restituito per intero."},
	{"acquisto", "Le auto usate sono garantite?", "Tutte le auto usate vendute a privati hanno la garanzia legale di conformità di dodici mesi prevista dal Codice del Consumo. Molti veicoli hanno anche una garanzia convenzionale estendibile fino a trentasei mesi, che copre motore, cambio, impianto elettrico e, sulle ibride, la batteria di trazione."},
	{"acquisto", "Cosa comprende la garanzia di 12 mesi sull'usato?", "La garanzia copre i difetti di conformità presenti al momento della consegna: guasti a motore, cambio, differenziale, centraline e impianto di climatizzazione. Non copre l'usura normale di freni, pneumatici, frizione e spazzole, né i danni causati da incidenti o da una manutenzione non eseguita."},
	{"acquisto", "Quali documenti servono per acquistare un'auto?", "Servono un documento d'identità valido, il codice fiscale e, per l'immatricolazione a nome di una società, la visura camerale aggiornata. In caso di finanziamento si aggiungono le ultime buste paga o la dichiarazione dei redditi e l'IBAN per l'addebito delle rate."},
	{"acquisto", "Quanto tempo serve per il passaggio di proprietà?", "Il passaggio di proprietà viene registrato al PRA in giornata tramite lo sportello telematico dell'automobilista. Il nuovo documento unico di circolazione arriva di solito entro due o tre giorni lavorativi; nel frattempo si circola con la ricevuta della pratica."},
	{"acquisto", "Posso provare l'auto prima di acquistarla?", "Certo: il test drive è gratuito e dura in genere mezz'ora su un percorso misto tra città e tangenziale. Basta presentarsi con la patente valida; per i veicoli commerciali più pesanti può essere richiesta la patente C."},
	{"acquisto", "Le auto a chilometro zero sono nuove?", "Un'auto a km zero è un veicolo nuovo già immatricolato dal concessionario e mai utilizzato su strada. Costa meno del listino perché risulta già intestata, ma conserva la garanzia del costruttore, che decorre dalla data della prima immatricolazione."},
	{"acquisto", "È possibile la consegna dell'auto a domicilio?", "Sì, la consegna a domicilio è disponibile su tutto il territorio nazionale con bisarca o con autista. Il costo dipende dalla distanza e viene indicato nel preventivo; al momento della consegna si firma il verbale e si ricevono documenti, chiavi e libretto di manutenzione."},
	// noleggio
	{"noleggio", "Come funziona il noleggio a lungo termine?", "Con il noleggio a lungo termine si paga un canone mensile fisso per un periodo da 24 a 60 mesi e un chilometraggio concordato. Il canone comprende assicurazione RC, manutenzione ordinaria e straordinaria, bollo e assistenza stradale: alla scadenza si restituisce l'auto o se ne sceglie una nuova."},
	{"noleggio", "Cosa è incluso nel canone di noleggio?", "Il canone standard include immatricolazione, bollo, RC auto, furto e incendio, manutenzione programmata, assistenza stradale 24 ore su 24 e gestione dei sinistri. Si possono aggiungere la kasko con franchigia ridotta, il cambio pneumatici stagionale e l'auto sostitutiva."},
	{"noleggio", "Il noleggio a lungo termine è adatto ai privati?", "Sì, da alcuni anni il noleggio a lungo termine è pensato anche per i privati: permette di conoscere in anticipo il costo complessivo dell'auto e di non preoccuparsi del valore di rivendita. Conviene soprattutto a chi percorre un chilometraggio prevedibile e cambia auto ogni tre o quattro anni."},
	{"noleggio", "Cosa succede se supero i chilometri previsti?", "I chilometri eccedenti vengono addebitati alla riconsegna secondo la tariffa al chilometro indicata nel contratto, di solito tra 5 e 12 centesimi. Se ci si accorge in anticipo di percorrere più strada del previsto, si può chiedere la rimodulazione del contratto."},
	{"noleggio", "Posso riscattare l'auto a fine noleggio?", "Il riscatto non è previsto da tutti i contratti di noleggio a lungo termine, ma molte società di noleggio propongono un'offerta di acquisto alla scadenza, calcolata sul valore di mercato dell'auto. In alternativa si può valutare il leasing, che prevede il riscatto fin dall'inizio."},
	{"noleggio", "Serve un anticipo per il noleggio?", "L'anticipo non è obbligatorio. Molte offerte sono ad anticipo zero; versare un anticipo riduce però il canone mensile. L'importo, detto anche canone anticipato, è fatturato e per le partite IVA segue le stesse regole di deducibilità del canone."},
	{"noleggio", "Come si gestisce un sinistro con l'auto a noleggio?", "In caso di incidente si compila la constatazione amichevole e la si invia alla società di noleggio entro tre giorni, insieme alle foto dei danni. La riparazione avviene in una carrozzeria convenzionata; resta a carico del cliente solo l'eventuale franchigia prevista dal contratto."},
	{"noleggio", "Quali verifiche creditizie sono previste per il noleggio?", "La società di noleggio valuta l'affidabilità del cliente consultando le banche dati creditizie e chiede documenti di reddito: buste paga o pensione per i privati, bilancio o dichiarazione dei redditi per le aziende. L'esito arriva di norma entro 48 ore lavorative."},
	// officina
	{"officina", "Ogni quanto devo fare il tagliando?", "La cadenza del tagliando è indicata nel libretto di manutenzione: di solito ogni 15.000 o 20.000 chilometri, oppure una volta l'anno se si percorre meno strada. Sulle auto recenti è il computer di bordo a segnalare la scadenza in base allo stato effettivo dell'olio."},
	{"officina", "Il tagliando fuori dalla rete ufficiale fa decadere la garanzia?", "No. Il regolamento europeo sulla distribuzione consente di fare il tagliando in qualsiasi officina, purché si rispetti il piano di manutenzione del costruttore e si usino ricambi originali o di qualità equivalente. Conviene conservare le fatture e far timbrare il libretto."},
	{"officina", "Quando vanno sostituiti gli pneumatici?", "Per legge il battistrada non deve scendere sotto 1,6 millimetri, ma per la sicurezza sul bagnato è consigliabile sostituire le gomme già a 3 millimetri. Anche con poca usura, gli pneumatici con più di sei o sette anni andrebbero cambiati perché la mescola si indurisce."},
	{"officina", "Come si mantiene la batteria di un'auto ibrida?", "La batteria di trazione di un'auto ibrida non richiede interventi ordinari: è gestita dall'elettronica di bordo. Durante il tagliando si controllano il filtro dell'aria di raffreddamento della batteria e lo stato di salute delle celle con la diagnosi del costruttore."},
	{"officina", "Quanto dura una revisione?", "La revisione ministeriale richiede circa quaranta minuti: si controllano freni, luci, emissioni, sterzo, sospensioni e pneumatici. La prima revisione va fatta dopo quattro anni dall'immatricolazione, poi ogni due anni; per i veicoli commerciali pesanti ogni anno."},
	{"officina", "È disponibile l'auto di cortesia durante la manutenzione?", "Sì, per gli interventi che richiedono più di una giornata è possibile prenotare un'auto di cortesia. La disponibilità è limitata, quindi conviene richiederla al momento della prenotazione del tagliando; il carburante va restituito allo stesso livello."},
	{"officina", "Come si ricalibrano i sensori ADAS dopo la sostituzione del parabrezza?", "Dopo la sostituzione del parabrezza la telecamera frontale va ricalibrata con un'attrezzatura dedicata, statica o dinamica secondo il costruttore. Senza ricalibrazione sistemi come la frenata automatica d'emergenza e il mantenimento di corsia possono funzionare in modo impreciso."},
	// finanziamento
	{"finanziamento", "Che cos'è il finanziamento con maxirata finale?", "Il finanziamento con maxirata prevede un anticipo, una serie di rate mensili contenute e una rata finale pari al valore futuro garantito dell'auto. Alla scadenza si può pagare la maxirata, rifinanziarla, oppure restituire l'auto o darla in permuta per un modello nuovo."},
	{"finanziamento", "Posso estinguere in anticipo il finanziamento?", "Sì, l'estinzione anticipata totale o parziale è sempre possibile. Si paga il capitale residuo più un indennizzo non superiore all'1% del capitale rimborsato in anticipo, o allo 0,5% se manca meno di un anno alla scadenza, come stabilito dal Testo unico bancario."},
	{"finanziamento", "Cosa sono TAN e TAEG?", "Il TAN è il tasso annuo nominale applicato al capitale finanziato. Il TAEG comprende anche spese di istruttoria, incasso rata, imposta di bollo e assicurazioni obbligatorie: è l'indicatore da usare per confrontare offerte diverse, perché esprime il costo totale del credito."},
	{"finanziamento", "Posso finanziare anche un'auto usata?", "Sì, il finanziamento è disponibile anche per le auto usate, con durate fino a 84 mesi. L'età del veicolo alla fine del piano non deve in genere superare i dieci anni; l'anticipo può essere coperto in tutto o in parte dal valore della permuta."},
	{"finanziamento", "Come funzionano gli incentivi statali per le auto elettriche?", "Gli incentivi statali sono erogati come sconto in fattura: il concessionario prenota il contributo sulla piattaforma ministeriale e lo applica al prezzo. L'importo dipende dalla fascia di emissioni, dal prezzo di listino, dall'ISEE per i privati e dalla rottamazione di un veicolo vecchio."},
	{"finanziamento", "Quali sono i tempi di approvazione di un finanziamento?", "Con la documentazione completa la risposta della finanziaria arriva di norma in poche ore, al massimo in due giorni lavorativi. Dopo l'approvazione si firma il contratto, anche con firma digitale, e si può procedere alla consegna del veicolo."},
	{"finanziamento", "Posso includere l'assicurazione nella rata?", "Sì, nella rata si possono includere la polizza furto e incendio, la kasko e la protezione del credito, che copre le rate in caso di perdita del lavoro o inabilità. Sono coperture facoltative: il loro costo è indicato separatamente nel prospetto informativo."},
	// permuta
	{"permuta", "Come viene valutata la mia auto in permuta?", "La valutazione parte dalle quotazioni di mercato di marca, modello, anno e chilometraggio, poi considera lo stato di carrozzeria, interni, pneumatici e lo storico della manutenzione. Un libretto con tutti i tagliandi e due chiavi originali aumentano il valore riconosciuto."},
	{"permuta", "Posso dare in permuta un'auto non ancora pagata?", "Sì. Se l'auto ha un finanziamento in corso, il concessionario chiede alla finanziaria il conteggio di estinzione e salda il debito residuo; la differenza tra valutazione e debito viene scalata dal prezzo della nuova auto o aggiunta al nuovo finanziamento."},
	{"permuta", "Ritirate anche veicoli commerciali in permuta?", "Sì, si ritirano in permuta furgoni, pick-up e veicoli commerciali fino a 3,5 tonnellate, anche allestiti. Per i veicoli con allestimenti speciali, come celle frigorifere o cassoni ribaltabili, la valutazione richiede la documentazione di omologazione dell'allestimento."},
	{"permuta", "La valutazione della permuta è vincolante?", "La valutazione scritta resta valida per quindici giorni o fino a 500 chilometri in più rispetto a quelli rilevati. Alla consegna l'auto viene ricontrollata: se le condizioni corrispondono a quanto dichiarato, il valore concordato viene confermato."},
	{"permuta", "Quali documenti servono per la permuta?", "Servono il documento unico di circolazione o il libretto con il certificato di proprietà, un documento d'identità dell'intestatario, il libretto di manutenzione e tutte le chiavi. Se l'intestatario è deceduto o è una società, si aggiungono i documenti di successione o la visura camerale."},
	{"permuta", "Posso vendere l'auto senza acquistarne un'altra?", "Sì, oltre alla permuta è possibile il ritiro con acquisto diretto, pagato con bonifico istantaneo al momento del passaggio di proprietà. Il prezzo può essere leggermente inferiore a quello riconosciuto in permuta, perché non è legato alla vendita di un altro veicolo."},
}

// faqCategoryParagraphs are generic follow-up paragraphs for global FAQ
// answers, by category.
var faqCategoryParagraphs = map[string][]string{
	"acquisto": {
		"Prima della firma ogni veicolo usato passa un controllo di oltre cento punti e viene consegnato con tagliando eseguito, livelli verificati e igienizzazione dell'abitacolo. Nel contratto sono sempre indicati il chilometraggio certificato e gli eventuali difetti estetici già presenti.",
		"Il prezzo esposto comprende IVA, preparazione alla consegna e garanzia; restano esclusi il passaggio di proprietà e l'imposta provinciale di trascrizione, che varia in base alla potenza del motore e alla provincia di residenza.",
		"Per chi ha bisogno di tempo per decidere è possibile chiedere un preventivo scritto, valido quindici giorni, con il dettaglio di prezzo, eventuale permuta e simulazione di finanziamento.",
	},
	"noleggio": {
		"Prima della firma si riceve un preventivo con canone, durata, chilometraggio e servizi inclusi: conviene confrontarlo con il costo totale di un acquisto con finanziamento, considerando anche svalutazione, assicurazione e manutenzione.",
		"Alla riconsegna un perito indipendente redige il verbale dello stato del veicolo secondo la guida di riferimento dell'associazione delle società di noleggio: i danni oltre la normale usura vengono addebitati in base a un listino noto in anticipo.",
		"Per le partite IVA il canone è deducibile e l'IVA detraibile secondo le percentuali previste per l'uso del veicolo; per i veicoli commerciali strumentali la deducibilità è piena.",
	},
	"officina": {
		"Il tagliando si prenota online o per telefono scegliendo giorno e fascia oraria. A fine intervento si riceve il resoconto dei controlli eseguiti, con le eventuali segnalazioni di componenti da sostituire nei mesi successivi.",
		"Per le auto ibride ed elettriche i tecnici sono formati per lavorare sui sistemi ad alta tensione e dispongono degli strumenti di diagnosi dei costruttori, necessari anche per gli aggiornamenti software.",
		"I ricambi utilizzati sono originali o di qualità equivalente certificata, con due anni di garanzia sul pezzo e sulla manodopera.",
	},
	"finanziamento": {
		"Ogni offerta è accompagnata dal documento SECCI con tutte le condizioni economiche: importo finanziato, numero e importo delle rate, TAN, TAEG e costo totale del credito. Conviene leggerlo con attenzione prima della firma.",
		"La simulazione della rata si può richiedere anche senza impegno, indicando prezzo, anticipo e durata. L'approvazione resta comunque soggetta alla valutazione della finanziaria.",
		"Chi ha un reddito non continuativo può valutare un coobbligato o una durata più lunga, che riduce la rata mensile ma aumenta il costo complessivo degli interessi.",
	},
	"permuta": {
		"La valutazione si può richiedere online caricando le foto dell'auto e indicando targa e chilometri: un primo valore indicativo arriva entro ventiquattro ore e viene confermato dopo la verifica dal vivo.",
		"Il ritiro dell'usato libera subito dall'assicurazione e dal bollo dei mesi successivi: il passaggio di proprietà al concessionario viene trascritto contestualmente alla consegna della nuova auto.",
		"Se l'auto ha più di dieci anni o non è più in condizioni di circolare, si può valutare la rottamazione, necessaria anche per accedere ad alcuni incentivi statali.",
	},
}

var faqClosings = []string{
	"Per casi particolari è sempre possibile parlare con un consulente, che verifica la situazione e indica la soluzione più adatta.",
	"Le condizioni descritte sono quelle standard: offerte e promozioni possono prevedere regole diverse, riportate nel preventivo.",
	"Le informazioni hanno valore orientativo e sono aggiornate periodicamente in base alle norme e alle condizioni commerciali in vigore.",
}

// dealerFAQ are the dealer's own questions.
var dealerFAQ = []faqSeed{
	{"acquisto", "Quali sono gli orari di apertura di {brand}?", "Lo showroom di {brand} in {address} a {city} è aperto dal lunedì al venerdì dalle 9 alle 19 e il sabato dalle 9 alle 13. L'officina apre alle 8 e accetta auto in accettazione rapida fino alle 9.30; la domenica si riceve solo su appuntamento per le consegne."},
	{"acquisto", "Dove si trova la sede di {brand} a {city}?", "La sede di {brand} è in {address}, a {city}, con ampio parcheggio riservato ai clienti. È raggiungibile con i mezzi pubblici e, su richiesta, offriamo il trasferimento gratuito dalla stazione più vicina per chi viene a ritirare l'auto."},
	{"permuta", "{brand} ritira l'usato a domicilio?", "Sì, {brand} ritira l'usato a domicilio in tutta la provincia di {city}: un nostro valutatore viene a vedere l'auto, conferma la quotazione e, se accetti, organizza il ritiro con un carro attrezzi o con un autista, senza costi aggiuntivi."},
	{"acquisto", "Come prenoto un test drive da {brand}?", "Il test drive si prenota dalla pagina del veicolo sul sito di {brand}, per telefono o via WhatsApp. Ti confermiamo l'orario entro la giornata e prepariamo l'auto con il pieno o la batteria carica; ricordati di portare la patente."},
	{"officina", "{brand} ha un'officina autorizzata?", "Sì, l'officina di {brand} a {city} è autorizzata da più costruttori per tagliandi in garanzia, richiami e interventi su veicoli ibridi ed elettrici. Disponiamo anche di un reparto carrozzeria e di una postazione per la ricalibrazione dei sensori ADAS."},
	{"finanziamento", "Posso pagare l'acconto con bonifico a {brand}?", "L'acconto si può versare a {brand} con bonifico, anche istantaneo, con carta di pagamento o con assegno circolare. Il saldo si effettua prima della consegna; per importi superiori alle soglie di legge non sono ammessi pagamenti in contanti."},
	{"acquisto", "{brand} consegna auto fuori {city}?", "Sì, {brand} consegna in tutta Italia. Per le consegne fuori dalla provincia di {city} indichiamo nel preventivo il costo del trasporto, che include l'assicurazione durante il viaggio; in alternativa puoi ritirare l'auto in sede."},
	{"acquisto", "Come contatto l'assistenza clienti di {brand}?", "L'assistenza clienti di {brand} risponde al telefono e via e-mail dal lunedì al sabato. Per richieste su un veicolo già acquistato indica sempre la targa: ti metteremo in contatto con il consulente che ha seguito la vendita."},
	{"noleggio", "{brand} propone offerte per aziende e partite IVA?", "Sì, {brand} ha un reparto dedicato alle flotte aziendali e ai professionisti, con offerte di noleggio a lungo termine, leasing e acquisto con IVA esposta. Il consulente flotte di {city} prepara preventivi comparati sulla base del chilometraggio e dell'uso dei veicoli."},
	{"acquisto", "Quali marchi tratta {brand}?", "{brand} tratta auto nuove, a km zero e usate di tutti i principali marchi, con una specializzazione nei veicoli commerciali. Nel nostro piazzale di {city} trovi sempre una selezione di vetture pronte consegna, visibili anche sul sito."},
	{"officina", "Posso ricaricare un'auto elettrica presso {brand}?", "Nel parcheggio di {brand} a {city} ci sono colonnine di ricarica in corrente alternata e una stazione rapida in corrente continua, a disposizione dei clienti durante la visita o l'intervento in officina. La ricarica è gratuita per chi ha un appuntamento."},
	{"acquisto", "{brand} organizza giornate porte aperte?", "Sì, {brand} organizza porte aperte in occasione del lancio dei nuovi modelli e due weekend promozionali all'anno, in primavera e in autunno. Le date sono pubblicate nelle news del sito e inviate agli iscritti alla newsletter."},
	{"noleggio", "{brand} offre il noleggio a breve termine?", "Oltre al noleggio a lungo termine, {brand} propone il noleggio a breve termine di auto e furgoni, da un giorno a un mese, con chilometraggio incluso. È utile anche come auto sostitutiva durante riparazioni lunghe non coperte da garanzia."},
	{"officina", "Come funziona il programma fedeltà di {brand}?", "Il programma fedeltà di {brand} è gratuito: a ogni tagliando eseguito nella nostra officina di {city} accumuli punti che danno diritto a sconti su ricambi, pneumatici e igienizzazione. I punti sono validi ventiquattro mesi."},
	{"permuta", "{brand} accetta in permuta moto e scooter?", "Sì, {brand} valuta in permuta anche moto e scooter in buono stato, purché immatricolati da non più di dieci anni. La valutazione segue la stessa procedura delle auto e il valore viene scalato dal prezzo del veicolo che acquisti."},
	{"finanziamento", "{brand} gestisce le pratiche per gli incentivi statali?", "Sì, {brand} prenota gli incentivi statali sulla piattaforma ministeriale per conto del cliente e li applica come sconto in fattura. Ti serve solo fornirci i documenti richiesti, compreso l'eventuale certificato di rottamazione e, per i bonus legati al reddito, l'ISEE."},
}

var dealerFAQParagraphs = []string{
	"Il team di {brand} a {city} è a disposizione per qualsiasi chiarimento: puoi scriverci dal modulo contatti del sito, chiamarci o passare in {address}.",
	"Ogni richiesta viene registrata e seguita da un consulente di {brand} fino alla chiusura, così non devi ripetere le stesse informazioni a persone diverse.",
	"{brand} opera a {city} e provincia da oltre vent'anni e segue ogni anno migliaia di clienti privati e aziende tra vendita, noleggio e assistenza.",
	"Le condizioni indicate valgono per i clienti di {brand}; promozioni temporanee possono prevedere regole diverse, riportate nel preventivo.",
}

// ---------------------------------------------------------------- news

type wireStory struct {
	brand, model string
	title        string
	lead         string
	short        string // subject of rewrite titles
}

var wireStories = []wireStory{
	{"Fiat", "Grande Panda", "Fiat Grande Panda, al via gli ordini della versione ibrida", "Sono aperti gli ordini della Fiat Grande Panda ibrida, che affianca la versione elettrica con un 1.2 turbo a 48 volt e cambio a doppia frizione.", "Fiat Grande Panda ibrida"},
	{"Fiat", "600e", "Fiat 600e, autonomia migliorata con il nuovo aggiornamento software", "Un aggiornamento software over the air migliora la gestione termica della batteria della Fiat 600e e aumenta l'autonomia nei percorsi autostradali.", "Fiat 600e aggiornata"},
	{"Fiat", "Ducato", "Fiat Ducato 2025, più tecnologia a bordo per i professionisti", "Il Fiat Ducato si aggiorna con nuovi sistemi di assistenza alla guida, un cockpit digitale e motori diesel conformi alla normativa Euro 6e.", "Fiat Ducato 2025"},
	{"Alfa Romeo", "Junior", "Alfa Romeo Junior Ibrida Q4, arriva la trazione integrale", "La Junior Ibrida Q4 aggiunge un motore elettrico posteriore che rende l'Alfa Romeo più piccola una trazione integrale elettrificata.", "Alfa Romeo Junior Ibrida Q4"},
	{"Alfa Romeo", "Tonale", "Alfa Romeo Tonale, nuovo allestimento e prezzi aggiornati", "La gamma Tonale si riorganizza con un allestimento d'ingresso più ricco e listini aggiornati per la versione ibrida plug-in Q4.", "Alfa Romeo Tonale 2025"},
	{"Lancia", "Ypsilon", "Lancia Ypsilon HF, la sportiva elettrica da 280 cavalli", "La Ypsilon HF riporta la sigla sportiva Lancia su un'utilitaria elettrica con assetto ribassato, carreggiate allargate e 280 CV.", "Lancia Ypsilon HF"},
	{"Toyota", "Yaris Cross", "Toyota Yaris Cross, il sistema full hybrid cresce di potenza", "La Yaris Cross adotta il nuovo sistema full hybrid da 130 CV, con una risposta più pronta e consumi invariati nel ciclo WLTP.", "Toyota Yaris Cross 130 CV"},
	{"Toyota", "C-HR", "Toyota C-HR plug-in, fino a 66 km in elettrico", "La Toyota C-HR ibrida plug-in percorre fino a 66 chilometri in modalità elettrica e può ricaricarsi in corrente alternata fino a 11 kW.", "Toyota C-HR plug-in"},
	{"Volkswagen", "ID.3", "Volkswagen ID.3 GTX, la compatta elettrica diventa sportiva", "Con la versione GTX la ID.3 raggiunge 326 CV, una batteria da 79 kWh e un assetto dedicato, senza rinunciare all'abitabilità.", "Volkswagen ID.3 GTX"},
	{"Volkswagen", "Tiguan", "Nuova Volkswagen Tiguan eHybrid, oltre 100 km a emissioni zero", "La terza generazione della Tiguan eHybrid dichiara oltre cento chilometri di autonomia elettrica e la ricarica rapida in corrente continua.", "Volkswagen Tiguan eHybrid"},
	{"Renault", "Clio", "Renault Clio E-Tech full hybrid, nuova generazione", "La nuova generazione della Renault Clio conferma la motorizzazione E-Tech full hybrid, con più potenza e un abitacolo completamente rinnovato.", "Renault Clio E-Tech"},
	{"Peugeot", "e-3008", "Peugeot e-3008, fino a 700 km con la batteria Long Range", "La versione Long Range della Peugeot e-3008 dichiara fino a 700 chilometri di autonomia nel ciclo WLTP grazie a una batteria da 98 kWh.", "Peugeot e-3008 Long Range"},
	{"Iveco", "eDaily", "Iveco eDaily, il commerciale elettrico per la logistica urbana", "Iveco amplia la gamma eDaily con nuove configurazioni di batteria e masse complessive fino a 7,2 tonnellate per le consegne dell'ultimo miglio.", "Iveco eDaily"},
	{"Ford", "Puma", "Ford Puma Gen-E, il crossover compatto diventa elettrico", "La Puma Gen-E conserva il bagagliaio con vano sotto il piano di carico e aggiunge un motore elettrico da 168 CV con 376 chilometri di autonomia.", "Ford Puma Gen-E"},
	{"Ford", "Transit Custom", "Ford Transit Custom, arriva la versione ibrida plug-in", "Il Transit Custom ibrido plug-in unisce un 2.5 a benzina a un motore elettrico e percorre oltre 50 chilometri a emissioni zero nei centri urbani.", "Ford Transit Custom PHEV"},
	{"Jeep", "Avenger", "Jeep Avenger 4xe, la trazione integrale diventa ibrida", "La Jeep Avenger 4xe abbina il 1.2 turbo a 48 volt a due motori elettrici, uno per asse, per una trazione integrale adatta anche allo sterrato.", "Jeep Avenger 4xe"},
}

var wireParagraphs = []string{
	"Sul piano tecnico la {model} punta su efficienza e semplicità d'uso: la gestione dell'energia è automatica e il guidatore può scegliere tra più modalità di guida, da quella più parsimoniosa a quella sportiva.",
	"L'arrivo nelle concessionarie è previsto nelle prossime settimane, con le prime consegne ai clienti entro la fine del trimestre. I listini partono da una versione d'ingresso già ben equipaggiata.",
	"La dotazione di serie comprende sistemi di assistenza alla guida di livello 2, infotainment con schermo centrale e connettività senza fili per gli smartphone, fari a LED e climatizzatore automatico.",
	"Secondo gli analisti il modello si inserisce in un segmento molto competitivo, dove la domanda di motorizzazioni elettrificate cresce più velocemente della media del mercato italiano.",
	"Per le flotte aziendali il costruttore ha annunciato formule di noleggio a lungo termine dedicate, con canoni comprensivi di manutenzione e assistenza stradale.",
}

type newsSeed struct {
	category string
	filter   string // "", "car", "comm" or "elec": which vehicle models fit
	title    string
	lead     string
}

// customNewsSeeds are the dealer's own news; {make}/{model} are filled from
// a vehicle model.
var customNewsSeeds = []newsSeed{
	{"eventi", "", "Porte aperte da {brand}: in prova {make} {model}", "Un weekend di porte aperte nello showroom di {brand} a {city} per provare {la} {make} {model} con i nostri consulenti."},
	{"eventi", "car", "Weekend test drive {make} da {brand} a {city}", "Sabato e domenica {brand} mette a disposizione l'intera gamma {make} per prove su strada gratuite, su prenotazione."},
	{"eventi", "elec", "Serata {make} {model} da {brand}: la mobilità elettrificata", "{brand} presenta {la} {make} {model} con una serata dedicata alla mobilità elettrificata, tra prove statiche e incontri con i tecnici."},
	{"eventi", "", "{brand} al salone dell'auto usata di {city}", "{brand} partecipa al salone dell'auto usata di {city} con uno stand di oltre trenta vetture selezionate, tra cui {la} {make} {model}."},
	{"promozioni", "", "{make} {model} a noleggio a lungo termine: l'offerta di {brand}", "{brand} propone {la} {make} {model} a noleggio a lungo termine con anticipo ridotto, manutenzione e assicurazione incluse nel canone."},
	{"promozioni", "", "Permuta e rottamazione: bonus {sulla} {make} {model} da {brand}", "Fino alla fine del mese chi dà in permuta o rottama un'auto riceve da {brand} un bonus aggiuntivo sull'acquisto {della} {make} {model}."},
	{"promozioni", "", "Finanziamento a tasso agevolato {sulla} {make} {model}", "Con il finanziamento proposto da {brand} {la} {make} {model} si porta a casa con un TAN agevolato e la prima rata dopo tre mesi."},
	{"promozioni", "", "Tagliando a prezzo fisso per i veicoli {make} da {brand}", "L'officina di {brand} a {city} propone il tagliando a prezzo fisso per tutti i veicoli {make} con più di quattro anni, ricambi originali inclusi."},
	{"servizi", "elec", "Nuove colonnine di ricarica nel piazzale di {brand}", "{brand} ha installato nuove colonnine di ricarica nel parcheggio di {city}, a disposizione dei clienti con auto elettriche e ibride plug-in come {la} {make} {model}."},
	{"servizi", "comm", "{brand} amplia l'officina per i veicoli commerciali", "Nuove postazioni e orari prolungati: l'officina di {brand} a {city} raddoppia lo spazio dedicato a furgoni e veicoli commerciali come {la} {make} {model}."},
	{"servizi", "", "Ritiro e riconsegna a domicilio per il tagliando {della} {make} {model}", "{brand} ritira l'auto a casa o in ufficio e la riconsegna dopo il tagliando, un servizio pensato per chi guida {la} {make} {model} e non ha tempo di venire in officina."},
	{"servizi", "", "Preventivi di carrozzeria online con {brand}", "Da oggi si può richiedere a {brand} un preventivo di carrozzeria caricando le foto del danno: la stima arriva entro ventiquattro ore, anche per {la} {make} {model}."},
	{"usato", "", "Usato garantito: {make} {model} in pronta consegna da {brand}", "Nel piazzale di {brand} a {city} sono arrivati nuovi esemplari usati di {make} {model}, controllati e garantiti fino a trentasei mesi."},
	{"usato", "", "Usato {make} {model}: cosa controllare secondo {brand}", "I tecnici di {brand} spiegano i punti da verificare prima di acquistare un esemplare usato di {make} {model}, dai tagliandi alla batteria."},
	{"usato", "", "Km zero {make} {model}: le ultime disponibilità da {brand}", "Poche unità {della} {make} {model} a km zero sono disponibili da {brand} con lo sconto sul listino e la garanzia del costruttore."},
}

var customNewsParagraphs = map[string][]string{
	"eventi": {
		"L'iniziativa si svolge nello showroom di {address}, con orario continuato dalle 9 alle 19. I consulenti saranno a disposizione per preventivi, valutazioni dell'usato e simulazioni di finanziamento.",
		"Per le prove su strada è consigliata la prenotazione, che si può fare dal sito o per telefono; i posti per ogni fascia oraria sono limitati.",
		"Durante l'evento sarà presente anche un tecnico dell'officina per rispondere alle domande su manutenzione, ricarica e costi di gestione.",
	},
	"promozioni": {
		"L'offerta è valida per i contratti firmati entro la fine del mese e fino a esaurimento delle vetture disponibili. Tutti i dettagli economici sono riportati nel preventivo e nel documento informativo.",
		"L'offerta è cumulabile con la valutazione della permuta e, dove previsto, con gli incentivi statali. I consulenti preparano una simulazione personalizzata in base al chilometraggio annuo.",
		"Le immagini sono indicative: colori e allestimenti disponibili possono variare. Il prezzo comprende messa su strada e garanzia.",
	},
	"servizi": {
		"Il servizio è attivo dal lunedì al sabato e si prenota online scegliendo giorno e fascia oraria. A fine intervento si riceve il resoconto dei lavori eseguiti via e-mail.",
		"Con questo investimento {brand} vuole ridurre i tempi di attesa e offrire ai clienti di {city} un'assistenza più comoda, anche per i veicoli ibridi ed elettrici.",
		"I tecnici dell'officina sono certificati per gli interventi sui sistemi ad alta tensione e utilizzano gli strumenti di diagnosi dei costruttori.",
	},
	"usato": {
		"Ogni veicolo usato viene controllato su oltre cento punti, tagliandato e consegnato con il libretto di manutenzione aggiornato e il chilometraggio certificato.",
		"È possibile prenotare la vettura online con un acconto rimborsabile e completare l'acquisto con finanziamento, permuta o noleggio.",
		"Le schede complete, con foto, dotazioni e prezzo, sono pubblicate nella sezione usato del sito e aggiornate ogni giorno.",
	},
}

var rewriteTitles = []string{
	"{short}: ora disponibile da {brand} a {city}",
	"{short}, le prime prove su strada da {brand}",
	"{short} arriva nello showroom di {brand}",
	"{short}: prezzi e offerte di {brand} a {city}",
}

var historicalTitles = []string{
	"Archivio {year}: porte aperte di primavera da {brand}",
	"Archivio {year}: {brand} inaugura il nuovo reparto usato",
	"Archivio {year}: le offerte di fine anno di {brand}",
	"Archivio {year}: {brand} al salone dell'auto di {city}",
	"Archivio {year}: rottamazione con bonus da {brand}",
	"Archivio {year}: nuovo orario estivo dell'officina di {brand}",
	"Archivio {year}: {brand} sostiene la squadra di basket di {city}",
	"Archivio {year}: premiazione dei migliori venditori di {brand}",
}

// ---------------------------------------------------------------- glossary

type termSeed struct {
	category string
	term     string
	def      string
}

var glossaryTerms = []termSeed{
	// tecnica
	{"tecnica", "Cambio automatico", "Il cambio automatico seleziona da solo il rapporto più adatto in base a velocità, carico e pressione sull'acceleratore, senza pedale della frizione. Può essere a convertitore di coppia, a variazione continua o robotizzato."},
	{"tecnica", "Cambio a doppia frizione", "Il cambio a doppia frizione usa due frizioni, una per le marce pari e una per le dispari: la marcia successiva è già innestata e il passaggio avviene in pochi centesimi di secondo, senza interruzioni di spinta."},
	{"tecnica", "Mild hybrid", "Un'auto mild hybrid ha un piccolo motore elettrico, di solito a 48 volt, che aiuta il motore termico in accelerazione e recupera energia in frenata. Non può viaggiare a lungo solo in elettrico, ma riduce consumi ed emissioni."},
	{"tecnica", "Full hybrid", "Una full hybrid combina motore termico e motore elettrico con una batteria che si ricarica in marcia. Può percorrere brevi tratti in modalità solo elettrica, soprattutto in città, e non va collegata alla rete."},
	{"tecnica", "Ibrido plug-in", "Un'ibrida plug-in ha una batteria più grande che si ricarica dalla presa o dalla colonnina e permette di percorrere da 40 a oltre 100 chilometri in elettrico; a batteria scarica funziona come una normale ibrida."},
	{"tecnica", "Ricarica wallbox", "La wallbox è una stazione di ricarica domestica da parete che alimenta l'auto elettrica in corrente alternata, in genere da 3,7 a 11 kW, in modo più rapido e sicuro rispetto a una presa domestica."},
	{"tecnica", "Ricarica rapida in corrente continua", "La ricarica rapida in corrente continua, detta anche DC, alimenta direttamente la batteria con potenze da 50 a oltre 300 kW e permette di passare dal 10 all'80% di carica in 20-40 minuti, a seconda del veicolo."},
	{"tecnica", "Frenata rigenerativa", "La frenata rigenerativa trasforma il motore elettrico in generatore durante la decelerazione: l'energia cinetica viene recuperata e immagazzinata nella batteria invece di essere dispersa in calore dai freni."},
	{"tecnica", "Autonomia WLTP", "L'autonomia WLTP è la distanza percorribile con una carica, misurata con la procedura di omologazione europea WLTP. Nell'uso reale varia con temperatura, velocità e stile di guida."},
	{"tecnica", "Coppia motrice", "La coppia motrice, espressa in newton metro, misura la forza di rotazione che il motore trasmette alle ruote. Una coppia elevata ai bassi regimi rende l'auto pronta in ripresa senza dover scalare marcia."},
	{"tecnica", "Trazione integrale", "Con la trazione integrale il motore trasmette la forza a entrambi gli assi. Migliora l'aderenza su fondi scivolosi; nelle ibride e nelle elettriche è spesso ottenuta con un motore elettrico dedicato al retrotreno."},
	{"tecnica", "Start & Stop", "Il sistema Start & Stop spegne il motore quando l'auto è ferma, per esempio al semaforo, e lo riavvia quando si rilascia il freno o si preme la frizione, riducendo consumi ed emissioni in città."},
	{"tecnica", "Turbocompressore", "Il turbocompressore sfrutta i gas di scarico per comprimere l'aria in ingresso nel motore: più aria significa più carburante bruciato e quindi più potenza a parità di cilindrata."},
	{"tecnica", "Filtro antiparticolato", "Il filtro antiparticolato, o FAP, trattiene le polveri sottili prodotte dai motori diesel e periodicamente le brucia in una fase detta rigenerazione, che richiede alcuni chilometri di guida a regime costante."},
	{"tecnica", "AdBlue", "L'AdBlue è una soluzione di urea e acqua iniettata nello scarico dei motori diesel moderni per ridurre gli ossidi di azoto. Va rabboccato periodicamente: se il serbatoio si svuota il motore non si riavvia."},
	{"tecnica", "GPL", "Il GPL, gas di petrolio liquefatto, è un carburante alternativo alla benzina con un costo al litro più basso. Le auto a GPL hanno un doppio serbatoio e possono viaggiare indifferentemente a gas o a benzina."},
	{"tecnica", "Cilindrata", "La cilindrata è il volume complessivo dei cilindri del motore, espresso in centimetri cubi. Influisce su potenza, consumi e, in Italia, su alcune imposte legate al veicolo."},
	{"tecnica", "Kilowattora", "Il kilowattora, kWh, è l'unità con cui si misurano la capacità della batteria di un'auto elettrica e l'energia acquistata alla colonnina; i consumi si esprimono in kWh ogni cento chilometri."},
	{"tecnica", "Pompa di calore", "La pompa di calore riscalda l'abitacolo delle auto elettriche con meno energia di una resistenza tradizionale, recuperando calore dall'esterno e dai componenti: in inverno riduce la perdita di autonomia."},
	{"tecnica", "Sospensioni adattive", "Le sospensioni adattive regolano in tempo reale la rigidità degli ammortizzatori in base al fondo stradale e alla modalità di guida, migliorando comfort e tenuta di strada."},
	{"tecnica", "Cavalli fiscali", "I cavalli fiscali sono un'unità convenzionale calcolata dalla cilindrata, usata in passato per il bollo e oggi ancora per alcune imposte di trascrizione; non corrispondono alla potenza reale del motore."},
	// sicurezza
	{"sicurezza", "ABS", "L'ABS, sistema antibloccaggio delle ruote, evita che le ruote si blocchino in frenata brusca modulando la pressione dei freni: l'auto resta sterzabile anche durante una frenata d'emergenza."},
	{"sicurezza", "ESP", "L'ESP, controllo elettronico della stabilità, interviene frenando le singole ruote e riducendo la coppia del motore quando rileva che l'auto sta sbandando, aiutando il guidatore a mantenere la traiettoria."},
	{"sicurezza", "ADAS", "Gli ADAS, sistemi avanzati di assistenza alla guida, usano telecamere, radar e sensori per aiutare il guidatore: frenata automatica, mantenimento di corsia, cruise control adattivo e riconoscimento dei segnali."},
	{"sicurezza", "Frenata automatica d'emergenza", "La frenata automatica d'emergenza, o AEB, rileva il rischio di collisione con veicoli, pedoni o ciclisti e, se il guidatore non reagisce, frena da sola per evitare l'urto o ridurne la gravità."},
	{"sicurezza", "Cruise control adattivo", "Il cruise control adattivo mantiene la velocità impostata e adegua automaticamente l'andatura a quella del veicolo che precede, rispettando una distanza di sicurezza regolabile; alcune versioni funzionano anche in coda."},
	{"sicurezza", "Mantenimento di corsia", "Il sistema di mantenimento di corsia riconosce le linee della carreggiata con una telecamera e corregge lo sterzo se l'auto tende a uscire dalla corsia senza che sia stato azionato l'indicatore di direzione."},
	{"sicurezza", "Rilevamento dell'angolo cieco", "Il rilevamento dell'angolo cieco segnala con una spia negli specchietti la presenza di veicoli nelle zone laterali non visibili, riducendo il rischio durante i cambi di corsia."},
	{"sicurezza", "Isofix", "Isofix è lo standard internazionale di attacchi rigidi per fissare i seggiolini per bambini direttamente alla scocca dell'auto, più sicuro e semplice del fissaggio con la cintura."},
	{"sicurezza", "Euro NCAP", "Euro NCAP è il programma europeo indipendente di valutazione della sicurezza delle auto nuove: assegna da una a cinque stelle in base a crash test e dotazioni di assistenza alla guida."},
	{"sicurezza", "Pneumatici invernali", "Gli pneumatici invernali hanno mescola e battistrada pensati per basse temperature, neve e ghiaccio. In molte strade italiane sono obbligatori, in alternativa alle catene a bordo, dal 15 novembre al 15 aprile."},
	{"sicurezza", "Airbag", "Gli airbag sono cuscini che si gonfiano in pochi millisecondi in caso di urto per proteggere gli occupanti; le auto moderne ne hanno frontali, laterali, a tendina e talvolta per le ginocchia."},
	{"sicurezza", "Sensori di parcheggio", "I sensori di parcheggio a ultrasuoni misurano la distanza dagli ostacoli e la segnalano con un suono sempre più frequente; spesso sono abbinati a una telecamera posteriore o a una visione a 360 gradi."},
	// finanza
	{"finanza", "NLT", "NLT è la sigla di noleggio a lungo termine: una formula in cui si paga un canone mensile fisso per usare un veicolo da 24 a 60 mesi, con assicurazione, manutenzione e bollo inclusi."},
	{"finanza", "Maxirata", "La maxirata è la rata finale di un finanziamento con valore futuro garantito: corrisponde al valore stimato dell'auto a fine contratto e si può pagare, rifinanziare o sostituire con la restituzione del veicolo."},
	{"finanza", "Leasing", "Il leasing è un contratto con cui una società acquista il veicolo e lo concede in uso al cliente dietro pagamento di canoni; alla scadenza il cliente può riscattarlo pagando il valore residuo concordato."},
	{"finanza", "TAN", "Il TAN, tasso annuo nominale, è il tasso d'interesse applicato al capitale finanziato su base annua, senza spese accessorie. Da solo non basta a confrontare due finanziamenti."},
	{"finanza", "TAEG", "Il TAEG, tasso annuo effettivo globale, esprime il costo totale del credito in percentuale annua, comprese spese di istruttoria, incasso rata e imposte: è il dato da usare per confrontare le offerte."},
	{"finanza", "Anticipo zero", "Un'offerta ad anticipo zero non richiede pagamenti iniziali: il costo del veicolo è interamente distribuito sulle rate o sui canoni, che risultano più alti rispetto a un'offerta con anticipo."},
	{"finanza", "Canone", "Il canone è l'importo mensile pagato nel noleggio o nel leasing. Nel noleggio a lungo termine comprende di solito assicurazione, manutenzione, bollo e assistenza stradale."},
	{"finanza", "Valore residuo", "Il valore residuo è il valore stimato del veicolo al termine di un contratto di leasing, noleggio o finanziamento con maxirata; più è alto, più sono basse le rate."},
	{"finanza", "Permuta", "La permuta è la cessione della propria auto usata al concessionario come parte del pagamento di un'altra vettura: il valore riconosciuto viene scalato dal prezzo d'acquisto."},
	{"finanza", "Franchigia", "La franchigia è la parte del danno che resta a carico dell'assicurato o del noleggiatore in caso di sinistro, furto o danni; più è bassa, più è alto il premio o il canone."},
	{"finanza", "Kasko", "La kasko è una copertura assicurativa che rimborsa i danni al proprio veicolo anche quando la responsabilità dell'incidente è del conducente; può prevedere una franchigia."},
	{"finanza", "RC Auto", "L'RC Auto è l'assicurazione obbligatoria di responsabilità civile che copre i danni causati a terzi con il veicolo. Senza copertura non si può circolare né sostare su strada pubblica."},
	{"finanza", "Bollo auto", "Il bollo auto è la tassa di possesso dovuta ogni anno alla Regione di residenza, calcolata su potenza in kW e classe ambientale; le auto elettriche ne sono esenti per alcuni anni in molte Regioni."},
	{"finanza", "Detraibilità IVA sui veicoli aziendali", "Per i veicoli aziendali a uso promiscuo l'IVA è detraibile al 40%, mentre è detraibile per intero per i veicoli strumentali all'attività, come i commerciali o le auto degli agenti di commercio."},
	// normativa
	{"normativa", "Euro 6", "Euro 6 è lo standard europeo sulle emissioni inquinanti delle auto immatricolate dal 2015, aggiornato nelle fasi 6d-TEMP, 6d e 6e con prove su strada RDE. Determina l'accesso a molte zone a traffico limitato."},
	{"normativa", "Euro 7", "Euro 7 è il nuovo regolamento europeo sulle emissioni che dal 2026-2027 introduce anche limiti per le polveri di freni e pneumatici e requisiti di durata per le batterie delle auto elettriche."},
	{"normativa", "Omologazione", "L'omologazione è la procedura con cui un veicolo o un componente viene certificato conforme alle norme tecniche e di sicurezza prima di essere venduto e immatricolato nell'Unione europea."},
	{"normativa", "Documento unico di circolazione", "Il documento unico di circolazione e di proprietà riunisce in un solo documento la carta di circolazione e il certificato di proprietà; è rilasciato dalla Motorizzazione per le immatricolazioni e i passaggi di proprietà."},
	{"normativa", "Passaggio di proprietà", "Il passaggio di proprietà è la registrazione al PRA del trasferimento di un veicolo da un proprietario all'altro; va richiesto entro sessanta giorni dall'autentica della firma del venditore."},
	{"normativa", "Revisione", "La revisione è il controllo periodico obbligatorio dell'efficienza e della sicurezza del veicolo: per le auto la prima è dopo quattro anni dall'immatricolazione, poi ogni due anni."},
	{"normativa", "Ecobonus", "L'ecobonus è il contributo statale per l'acquisto di veicoli a basse emissioni, erogato come sconto in fattura dal concessionario in base a fascia di CO2, prezzo ed eventuale rottamazione."},
	{"normativa", "ZTL", "La ZTL, zona a traffico limitato, è un'area urbana in cui l'accesso è riservato a veicoli autorizzati in determinate fasce orarie; molte città esentano o agevolano i veicoli elettrici e ibridi."},
	{"normativa", "Certificato di conformità", "Il certificato di conformità, o COC, è il documento del costruttore che attesta che il veicolo corrisponde al tipo omologato; serve per immatricolare in Italia un'auto acquistata all'estero."},
	{"normativa", "Fermo amministrativo", "Il fermo amministrativo è un provvedimento con cui l'agente della riscossione blocca un veicolo per debiti non pagati: il veicolo non può circolare finché il debito non è saldato o rateizzato."},
	{"normativa", "Massa complessiva", "La massa complessiva è il peso massimo del veicolo a pieno carico indicato sulla carta di circolazione; con la patente B si guidano veicoli fino a 3,5 tonnellate, con eccezioni per i commerciali elettrici."},
	{"normativa", "Km zero", "Un'auto a km zero è un veicolo nuovo già immatricolato dal concessionario o dal costruttore e mai usato su strada, venduto come usato ma con la garanzia del costruttore ancora valida."},
}

var glossaryCategoryParagraphs = map[string][]string{
	"tecnica": {
		"Conoscere il funzionamento di questa soluzione aiuta a scegliere la motorizzazione più adatta al proprio uso quotidiano e a interpretare correttamente i dati tecnici riportati nei listini e nelle schede dei veicoli.",
		"Nella scheda tecnica di un veicolo questa voce compare insieme a potenza, coppia, consumi ed emissioni: sono dati omologati, che nell'uso reale possono variare in funzione di percorso, carico e clima.",
	},
	"sicurezza": {
		"Dal luglio 2024 il regolamento europeo sulla sicurezza generale rende obbligatori diversi sistemi di assistenza su tutte le auto nuove immatricolate: per questo molti dispositivi un tempo opzionali sono ora di serie.",
		"I sistemi di sicurezza attiva aiutano il guidatore ma non lo sostituiscono: la responsabilità della guida resta sempre di chi è al volante, che deve mantenere attenzione e distanza di sicurezza.",
	},
	"finanza": {
		"Quando si confrontano offerte diverse conviene considerare il costo complessivo per tutta la durata del contratto, non solo l'importo mensile: anticipo, servizi inclusi e valore finale cambiano molto il risultato.",
		"Le condizioni economiche sono sempre riportate nei documenti precontrattuali, che vanno consegnati al cliente prima della firma e che è utile leggere con attenzione.",
	},
	"normativa": {
		"Le regole cambiano nel tempo e possono differire da una Regione o da un Comune all'altro: prima di un acquisto o di un viaggio conviene verificare le disposizioni in vigore sui siti istituzionali.",
		"Le pratiche amministrative si possono svolgere presso gli sportelli della Motorizzazione e del PRA oppure tramite un'agenzia di pratiche auto o il concessionario, che se ne occupa per conto del cliente.",
	},
}

var glossaryExamples = []string{
	"Un esempio concreto: su {body} come {la} {make} {model} {fuel} questa voce incide direttamente su consumi, piacere di guida e costi di gestione, ed è tra le domande più frequenti in fase di preventivo.",
	"Per fare un esempio, chi valuta {body} come {la} {make} {model} trova questa informazione nella scheda del veicolo e nel preventivo, accanto a prezzo, dotazioni e garanzia.",
	"Nella pratica, per {body} come {la} {make} {model} questa caratteristica è uno degli elementi da confrontare con i modelli concorrenti prima di decidere.",
}

// ---------------------------------------------------------------- guides

type guideSeed struct {
	topic string
	title string
	lead  string
}

var guideSeeds = []guideSeed{
	{"acquisto", "Come scegliere la prima auto: guida per neopatentati", "La prima auto deve essere sicura, economica da mantenere e adatta ai limiti di potenza previsti per i neopatentati: ecco come orientarsi."},
	{"acquisto", "Auto usata: i dieci controlli da fare prima dell'acquisto", "Dalla carrozzeria al libretto dei tagliandi, i controlli essenziali per acquistare un'auto usata senza sorprese."},
	{"acquisto", "Km zero, aziendale o usato: quale conviene", "Km zero, ex aziendali e usato tradizionale hanno prezzi, garanzie e storie diverse: come confrontarli davvero."},
	{"acquisto", "Guida all'acquisto di un SUV compatto", "I SUV compatti sono il segmento più venduto in Italia: spazio, motorizzazioni e dotazioni da valutare prima di scegliere."},
	{"acquisto", "Come leggere il documento unico di circolazione", "Tutte le voci del documento unico di circolazione spiegate una per una, utili soprattutto quando si compra un'auto usata."},
	{"acquisto", "Acquistare un'auto online in sicurezza", "Prenotazione online, acconto e consegna a domicilio: come comprare un'auto a distanza proteggendosi dalle truffe."},
	{"acquisto", "Auto per famiglie numerose: come scegliere", "Sette posti, bagagliaio e attacchi Isofix: i criteri per scegliere l'auto giusta quando la famiglia cresce."},
	{"noleggio", "Come funziona il noleggio a lungo termine", "Canone, durata, chilometri e servizi inclusi: tutto quello che serve sapere prima di firmare un contratto di noleggio a lungo termine."},
	{"noleggio", "Noleggio a lungo termine per privati: pro e contro", "Il noleggio a lungo termine non è più solo per le aziende: vantaggi, limiti e profili per cui conviene davvero."},
	{"noleggio", "Noleggio o acquisto: come decidere", "Un confronto pratico tra noleggio a lungo termine e acquisto con finanziamento, con un esempio di costo su quattro anni."},
	{"noleggio", "La riconsegna dell'auto a noleggio: cosa sapere", "Come prepararsi alla riconsegna del veicolo a fine noleggio ed evitare addebiti per danni e chilometri in eccesso."},
	{"noleggio", "Come scegliere il chilometraggio del noleggio", "Stimare bene i chilometri annui è il modo più semplice per non pagare troppo il noleggio a lungo termine."},
	{"noleggio", "Noleggio a lungo termine per partite IVA", "Deducibilità, detraibilità dell'IVA e scelta del veicolo: il noleggio a lungo termine per professionisti e aziende."},
	{"noleggio", "Noleggio a lungo termine di auto elettriche", "Con il noleggio il rischio sul valore futuro della batteria resta alla società di noleggio: perché conviene per le auto elettriche."},
	{"manutenzione", "Il tagliando: cosa si controlla e ogni quanto farlo", "Cosa prevede il tagliando, quanto costa e perché rispettare il piano di manutenzione del costruttore."},
	{"manutenzione", "Cambio gomme stagionale: guida completa", "Quando montare gli pneumatici invernali, come conservare quelli estivi e quando conviene scegliere le quattro stagioni."},
	{"manutenzione", "Come preparare l'auto per le vacanze", "I controlli da fare prima di un lungo viaggio: pneumatici, livelli, luci, climatizzatore e documenti."},
	{"manutenzione", "La manutenzione dell'auto ibrida", "Un'ibrida ha meno usura su freni e frizione ma richiede controlli specifici: cosa cambia rispetto a un'auto tradizionale."},
	{"manutenzione", "Le spie del cruscotto: cosa significano", "Rosse, gialle e verdi: come interpretare le spie del cruscotto e quando fermarsi subito."},
	{"manutenzione", "Batteria a 12 volt scarica: come prevenirla", "Perché la batteria di servizio si scarica, come capire se è da sostituire e come ripartire in sicurezza."},
	{"manutenzione", "Climatizzatore: manutenzione e ricarica", "Filtro abitacolo, igienizzazione e ricarica del gas: come mantenere efficiente il climatizzatore dell'auto."},
	{"elettrico", "Come ricaricare un'auto elettrica a casa", "Presa domestica, wallbox e potenza del contatore: le soluzioni per ricaricare l'auto elettrica nel proprio box."},
	{"elettrico", "Installare una wallbox: costi e permessi", "Quanto costa installare una wallbox, quali permessi servono in condominio e quali incentivi sono disponibili."},
	{"elettrico", "Ibrido, plug-in o elettrico: quale scegliere", "Le differenze tra mild hybrid, full hybrid, ibrido plug-in ed elettrico spiegate in base ai chilometri e alle abitudini."},
	{"elettrico", "Autonomia delle auto elettriche in inverno", "Perché l'autonomia cala con il freddo e come limitare la perdita con pompa di calore e precondizionamento."},
	{"elettrico", "Ricarica pubblica: tariffe, app e abbonamenti", "Come orientarsi tra operatori, tariffe a consumo e abbonamenti per ricaricare l'auto elettrica fuori casa."},
	{"elettrico", "Incentivi per l'auto elettrica: guida pratica", "Chi può accedere agli incentivi per l'auto elettrica, quanto valgono e come vengono applicati in concessionaria."},
	{"elettrico", "Viaggiare in auto elettrica: pianificare le soste", "Come pianificare un lungo viaggio in auto elettrica tra ricariche rapide, app di navigazione e tempi di sosta."},
	{"finanza", "Finanziamento con maxirata: come funziona", "Anticipo, rate mensili e maxirata finale: come funziona il finanziamento con valore futuro garantito e quando conviene."},
	{"finanza", "TAN e TAEG: come confrontare i preventivi", "Come leggere un preventivo di finanziamento auto e confrontare offerte diverse usando il TAEG."},
	{"finanza", "Permuta: come ottenere la valutazione migliore", "Documenti, manutenzione e piccoli interventi estetici che aumentano il valore dell'usato in permuta."},
	{"finanza", "Quanto costa mantenere un'auto in un anno", "Carburante o energia, assicurazione, bollo, manutenzione e svalutazione: il costo reale di un'auto in un anno."},
	{"finanza", "Assicurazione auto: come scegliere le garanzie", "RC auto, furto e incendio, kasko e assistenza stradale: quali garanzie servono davvero e come risparmiare."},
	{"finanza", "Leasing o noleggio per la partita IVA", "Leasing e noleggio a lungo termine a confronto per professionisti: costi, fiscalità e gestione."},
	{"commerciali", "Come scegliere un furgone per la propria attività", "Volume di carico, portata, passo e motorizzazione: come scegliere il furgone giusto per il lavoro."},
	{"commerciali", "Allestimenti per veicoli commerciali: guida", "Celle isotermiche, cassoni, officine mobili e scaffalature: gli allestimenti più diffusi e come omologarli."},
	{"commerciali", "Patente B e veicoli commerciali fino a 3,5 tonnellate", "Cosa si può guidare con la patente B, come leggere la massa complessiva e le eccezioni per i commerciali elettrici."},
	{"commerciali", "Veicoli commerciali elettrici per la logistica urbana", "Autonomia, portata e ricarica in deposito: quando un furgone elettrico è adatto alle consegne in città."},
	{"commerciali", "Noleggio di veicoli commerciali: cosa sapere", "Noleggio a breve e a lungo termine di furgoni e pick-up: formule, servizi inclusi e vantaggi fiscali."},
	{"commerciali", "La manutenzione del furgone aziendale", "Piano di manutenzione, controlli su freni e sospensioni e gestione dei fermi macchina per i veicoli da lavoro."},
}

var guideModelTitles = []string{
	"Guida all'acquisto dell'usato: {make} {model}",
	"{make} {model}: versioni, motori e prezzi spiegati",
}

var guideTopicParagraphs = map[string][]string{
	"acquisto": {
		"Il primo passo è definire un budget realistico, che comprenda non solo il prezzo del veicolo ma anche passaggio di proprietà, assicurazione e primi interventi di manutenzione. Con un budget chiaro si restringe subito la scelta e si evitano ripensamenti.",
		"Prima di firmare conviene verificare lo storico del veicolo: tagliandi documentati, numero di proprietari, eventuali sinistri e chilometraggio certificato. Un'auto con storia trasparente vale di più anche al momento della rivendita.",
		"La prova su strada resta insostituibile: permette di valutare posizione di guida, rumorosità, comportamento del cambio e dei freni. Meglio farla su un percorso misto, simile a quello che si affronta ogni giorno.",
		"Infine, il preventivo va letto voce per voce: prezzo, eventuali accessori, costi di messa su strada, garanzia e condizioni di pagamento. Le promozioni hanno spesso scadenze e vincoli che è bene conoscere in anticipo.",
	},
	"noleggio": {
		"La durata del contratto e i chilometri annui sono le due leve principali del canone: contratti più lunghi riducono la quota mensile, ma vincolano più a lungo; un chilometraggio sottostimato si paga alla riconsegna.",
		"Tra i servizi inclusi i più importanti sono la copertura assicurativa, con le relative franchigie, la manutenzione ordinaria e straordinaria, il cambio pneumatici e l'auto sostitutiva in caso di fermo.",
		"L'anticipo riduce il canone ma non il costo complessivo: per confrontare due offerte conviene sommare anticipo e canoni per l'intera durata, verificando che i servizi inclusi siano gli stessi.",
		"Alla scadenza si riconsegna il veicolo dopo una perizia sullo stato d'uso: conservare il veicolo con cura, far riparare i piccoli danni e rispettare il piano di manutenzione evita addebiti imprevisti.",
	},
	"manutenzione": {
		"Il libretto di manutenzione indica gli interventi previsti a ogni scadenza, in chilometri o in tempo: rispettarlo mantiene valida la garanzia e conserva il valore dell'auto nel tempo.",
		"Molti controlli si possono fare anche da soli: pressione degli pneumatici, livello dell'olio e del liquido lavavetri, funzionamento delle luci. Bastano pochi minuti al mese per prevenire guasti più costosi.",
		"Le auto moderne segnalano le anomalie con spie e messaggi sul display: non vanno ignorate. Una diagnosi tempestiva in officina spesso risolve con un intervento semplice ciò che, trascurato, diventerebbe un guasto serio.",
		"Conservare fatture e resoconti degli interventi è utile sia per eventuali richieste in garanzia sia al momento della vendita o della permuta, perché documenta la cura con cui il veicolo è stato mantenuto.",
	},
	"elettrico": {
		"Il punto di partenza è capire dove si ricaricherà l'auto: chi dispone di un box o di un posto auto privato può installare una wallbox e ricaricare di notte a costi contenuti, chi non ce l'ha dipende dalla rete pubblica.",
		"L'autonomia dichiarata segue il ciclo WLTP: nell'uso reale varia con temperatura, velocità e uso del climatizzatore. In autostrada d'inverno può ridursi anche del 30%, mentre in città spesso si avvicina al dato omologato.",
		"I costi di gestione di un'auto elettrica sono generalmente più bassi: meno manutenzione, niente cambio olio, freni che si consumano meno grazie alla frenata rigenerativa ed esenzione dal bollo in molte Regioni.",
		"Per chi percorre molti chilometri in autostrada senza possibilità di ricarica privata, un'ibrida full o plug-in può rappresentare un compromesso efficace in attesa che la rete di ricarica rapida si infittisca.",
	},
	"finanza": {
		"Il TAEG è l'indicatore più affidabile per confrontare finanziamenti diversi, perché include interessi e spese accessorie. Due offerte con la stessa rata possono avere costi totali molto diversi.",
		"Anticipo, durata e valore finale sono collegati: un anticipo alto riduce rata e interessi, una durata lunga abbassa la rata ma aumenta il costo complessivo, una maxirata alta sposta il costo alla fine del contratto.",
		"Le coperture assicurative facoltative, come la protezione del credito o la kasko, possono essere utili ma vanno valutate separatamente: il loro costo è indicato nel documento informativo e non sono mai obbligatorie per ottenere il finanziamento.",
		"Una valutazione accurata della permuta può coprire l'anticipo: presentare l'usato con tagliandi documentati, due chiavi e carrozzeria in ordine aiuta a ottenere il valore migliore.",
	},
	"commerciali": {
		"La scelta parte dal tipo di carico: volume in metri cubi, portata utile e dimensioni del vano determinano il modello e il passo. Conviene misurare il carico tipico e lasciare un margine per le esigenze future.",
		"Gli allestimenti vanno pianificati con l'allestitore e omologati: scaffalature, celle isotermiche e cassoni modificano la massa e devono risultare sulla carta di circolazione.",
		"Per le attività urbane i veicoli elettrici offrono accesso alle zone a traffico limitato e costi di esercizio ridotti; per i lunghi tragitti extraurbani il diesel di ultima generazione resta spesso la scelta più pratica.",
		"Il fermo macchina è un costo per l'azienda: contratti di noleggio o di manutenzione programmata con veicolo sostitutivo riducono il rischio di restare senza mezzo nei momenti di lavoro intenso.",
	},
}

var guideDealerSeeds = []guideSeed{
	{"acquisto", "Come acquistare un'auto da {brand}: passo per passo", "Dalla prenotazione online alla consegna, ecco come funziona l'acquisto di un'auto da {brand} a {city}."},
	{"noleggio", "La guida di {brand} al noleggio a lungo termine a {city}", "Come {brand} costruisce un'offerta di noleggio a lungo termine su misura per privati e aziende di {city}."},
	{"manutenzione", "L'officina di {brand} spiegata ai clienti", "Prenotazione, accettazione, lavori e riconsegna: come funziona l'assistenza nell'officina di {brand}."},
	{"elettrico", "Ricaricare l'auto elettrica a {city}: la guida di {brand}", "Colonnine pubbliche, wallbox domestica e ricarica in concessionaria: i consigli di {brand} per chi guida elettrico a {city}."},
}

// ---------------------------------------------------------------- media

var videoTitles = []string{
	"{make} {model} {fuel}: video presentazione di {brand}",
	"Prova su strada: {make} {model} con {brand}",
	"{make} {model} in pronta consegna da {brand}: il walkaround",
	"Interni e tecnologia {della} {make} {model} nello showroom di {brand}",
}

var videoParagraphs = []string{
	"Nel video i consulenti di {brand} mostrano {la} {make} {model} da ogni angolazione: carrozzeria, cerchi, fari e dettagli di finitura, con un focus sulle differenze tra gli allestimenti disponibili.",
	"A bordo si scoprono posizione di guida, qualità dei materiali, spazio per i passeggeri posteriori e capacità del bagagliaio, misurato con i sedili in posizione normale e abbattuti.",
	"La parte dedicata alla tecnologia illustra il sistema di infotainment, la connettività con lo smartphone, i sistemi di assistenza alla guida di serie e a richiesta e, sulle versioni elettrificate, il funzionamento del sistema ibrido o elettrico.",
	"Nella prova su strada si valutano comfort delle sospensioni, silenziosità, prontezza del motore {fuel} e consumi rilevati su un percorso misto tra città e tangenziale di {city}.",
	"Al termine del video sono riepilogati prezzo, formule di finanziamento e noleggio disponibili da {brand}, con le istruzioni per prenotare un test drive.",
}

var globalVideoSeeds = []struct{ title, lead string }{
	{"Come funziona un sistema full hybrid, spiegato in tre minuti", "Un'animazione mostra come motore termico, motore elettrico e batteria collaborano in un sistema full hybrid."},
	{"Ricaricare un'auto elettrica con la wallbox di casa", "Dalla presa al contatore: come si installa e si usa una wallbox domestica per ricaricare l'auto elettrica."},
	{"Cambio gomme: come leggere la sigla dello pneumatico", "Larghezza, spalla, diametro, indice di carico e codice di velocità: la sigla dello pneumatico spiegata passo per passo."},
	{"ADAS: come funzionano frenata automatica e mantenimento di corsia", "Telecamere e radar al lavoro: i principali sistemi di assistenza alla guida mostrati in situazioni reali."},
	{"Noleggio a lungo termine: come leggere il preventivo", "Canone, anticipo, chilometri e franchigie: un esempio di preventivo di noleggio a lungo termine analizzato voce per voce."},
	{"Furgoni elettrici per le consegne in città: la prova", "Una giornata di consegne urbane con un furgone elettrico per misurare autonomia reale, ricarica e praticità."},
}

var podcastTitles = []string{
	"{make} {model}, pregi e difetti in dieci minuti",
	"Il punto {sulla} {make} {model}: consumi, dotazioni e prezzi",
	"{brand} racconta {la} {make} {model}",
	"Usato {make} {model}: cosa controllare, con i tecnici di {brand}",
}

var podcastParagraphs = []string{
	"In questo episodio il team di {brand} analizza {la} {make} {model}: posizionamento sul mercato, gamma motori e versioni più richieste dai clienti di {city}.",
	"Si parla di costi di gestione, dal consumo reale della versione {fuel} alla manutenzione programmata, del confronto tra motore tradizionale, ibrido ed elettrico e di come {la} {make} {model} si confronta con le principali concorrenti.",
	"Spazio anche alle formule di acquisto: finanziamento con maxirata, noleggio a lungo termine e valutazione della permuta, con esempi concreti di rata e canone.",
	"L'episodio si chiude con i consigli per la prova su strada e con le domande più frequenti arrivate in concessionaria {sulla} {make} {model}.",
}

var podcastTranscriptLines = []string{
	"Conduttore: Benvenuti a un nuovo episodio del podcast di {brand}. Oggi parliamo {della} {make} {model}.",
	"Consulente: Grazie. {La} {make} {model} è {body} che a {city} sta andando molto bene, soprattutto nella versione {fuel}.",
	"Conduttore: Partiamo dai consumi. Cosa dicono i clienti dopo qualche mese di utilizzo?",
	"Consulente: I dati reali sono vicini a quelli dichiarati nel ciclo misto; in città la versione {fuel} dà il meglio, in autostrada i consumi salgono come è normale.",
	"Conduttore: E sul fronte della manutenzione?",
	"Consulente: Il piano prevede un tagliando all'anno o ogni quindicimila chilometri. In officina da {brand} lo prenotate online e, se serve, vi diamo un'auto di cortesia.",
	"Conduttore: Chi valuta il noleggio a lungo termine cosa deve sapere?",
	"Consulente: Che il canone comprende assicurazione, manutenzione e bollo. Conviene stimare bene i chilometri annui, perché quelli in più si pagano alla riconsegna.",
	"Conduttore: Ultima domanda: un consiglio per la prova su strada?",
	"Consulente: Fate la prova sul vostro percorso di tutti i giorni, con i sedili regolati bene e il bagagliaio carico come lo usereste davvero.",
	"Conduttore: Grazie a tutti per l'ascolto, alla prossima puntata.",
}

var globalPodcastSeeds = []struct{ title, lead string }{
	{"Mobilità elettrica in Italia: a che punto siamo", "Vendite, infrastruttura di ricarica e incentivi: una panoramica sulla diffusione dell'auto elettrica in Italia."},
	{"Noleggio a lungo termine: perché piace ai privati", "Come è cambiato il noleggio a lungo termine negli ultimi anni e perché lo scelgono sempre più famiglie."},
	{"Veicoli commerciali e consegne dell'ultimo miglio", "Furgoni elettrici, ZTL e logistica urbana: come cambiano i veicoli da lavoro nelle città italiane."},
	{"Sicurezza alla guida: gli ADAS diventano obbligatori", "Cosa prevede il regolamento europeo sulla sicurezza generale e come cambiano le auto nuove."},
}

var globalMediaParagraphs = []string{
	"Il contenuto è pensato per chi sta valutando l'acquisto o il noleggio di un'auto nuova e vuole capire in modo semplice tecnologie e formule commerciali, senza gergo tecnico.",
	"Gli esempi fanno riferimento a modelli diffusi sul mercato italiano, come {make} {model}, ma le indicazioni valgono in generale per tutti i veicoli della stessa categoria.",
	"Alla fine vengono riassunti i punti principali e i controlli da fare prima di firmare un contratto, con i riferimenti normativi aggiornati.",
	"Per approfondire si possono consultare le guide e il glossario, dove ogni termine tecnico citato è spiegato in dettaglio.",
}
