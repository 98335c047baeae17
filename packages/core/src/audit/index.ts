export { AuditLogPage, listAuditLog, ListAuditLogInput } from "./list-audit-log.ts";
export { auditInsertSql, recordAudit } from "./record-audit.ts";
export { recordSignIn } from "./record-sign-in.ts";
