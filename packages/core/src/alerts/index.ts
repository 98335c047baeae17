export {
  AlertEpisodeList,
  AlertEpisodeView,
  AlertRuleId,
  AlertRuleKind,
  AlertRuleList,
  AlertRuleView,
  CreateAlertRuleInput,
  ListAlertEpisodesQuery,
  MAX_ALERT_RULES_PER_ORG,
  UpdateAlertRuleInput,
} from "./alert-spec.ts";
export {
  BURN_RATE_CONDITIONS,
  countStartsInWindows,
  evaluateBurnRates,
  type BurnSeverity,
} from "./burn-rate-conditions.ts";
export { createAlertRule } from "./create-alert-rule.ts";
export { deleteAlertRule } from "./delete-alert-rule.ts";
export { evaluateColdStartAlerts } from "./evaluate-cold-start-alerts.ts";
export { evaluateOpenAlertEpisodes } from "./evaluate-open-alert-episodes.ts";
export { listAlertEpisodes } from "./list-alert-episodes.ts";
export { getAlertRule } from "./get-alert-rule.ts";
export { listAlertRules } from "./list-alert-rules.ts";
export { slowStartFinding } from "./slow-start-finding.ts";
export { updateAlertRule } from "./update-alert-rule.ts";
