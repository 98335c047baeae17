// The rule for names and free text is the protocol's (agents send names too); core's users
// import it from here.
export { plainText } from "@thaw/protocol";
