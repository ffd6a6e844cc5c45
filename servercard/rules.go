package servercard

// RulesVersion names the rules of Check and Validate (schema, semantic rules and grading). It is stored with every
// judgement they make; change it whenever a change to them would judge a
// stored document differently (a new finding, another severity or grade),
// so that `crawl --revalidate` and the next Registry sync re-judge stored
// documents without fetching them again.
const RulesVersion = "servercard/1"
