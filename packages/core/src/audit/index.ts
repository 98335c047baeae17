export { listAuditLog, ListAuditLogInput } from "./list-audit-log.ts";
export { recordAudit } from "./record-audit.ts";
