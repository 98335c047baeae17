export { AuditLogPage, listAuditLog, ListAuditLogInput } from "./list-audit-log.ts";
export { recordAudit } from "./record-audit.ts";
export { recordSignIn } from "./record-sign-in.ts";
