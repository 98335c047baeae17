import Link from "next/link";
import { signOutAction } from "../app/auth-actions.ts";
import type { NavKey } from "./dashboard-shell.tsx";

export function DashboardHeader({
  email,
  orgName,
  role,
  active,
  links,
}: {
  email: string;
  orgName: string | null;
  role: string | null;
  active: NavKey;
  links: { deploy: boolean; audit: boolean; members: boolean; webhooks: boolean; alerts: boolean };
}) {
  const nav: { key: NavKey; href: string; label: string; shown: boolean }[] = [
    { key: "overview", href: "/", label: "Overview", shown: true },
    { key: "deploy", href: "/endpoints/new", label: "Deploy endpoint", shown: links.deploy },
    { key: "audit", href: "/audit", label: "Audit log", shown: links.audit },
    { key: "members", href: "/members", label: "Members", shown: links.members },
    { key: "alerts", href: "/alerts", label: "Alerts", shown: links.alerts },
    { key: "webhooks", href: "/webhooks", label: "Webhooks", shown: links.webhooks },
  ];
  return (
    <header className="topbar">
      <div className="topbar-left">
        <Link href="/" className="brand">
          Thaw
        </Link>
        {orgName && (
          <span className="org" data-testid="org-name">
            {orgName}
            {role && <span className="badge">{role}</span>}
          </span>
        )}
        {orgName && (
          <nav aria-label="Main" className="main-nav">
            {nav
              .filter((n) => n.shown)
              .map((n) => (
                <Link
                  key={n.key}
                  href={n.href}
                  className="nav-link"
                  aria-current={n.key === active ? "page" : undefined}
                >
                  {n.label}
                </Link>
              ))}
          </nav>
        )}
      </div>
      <div className="topbar-right">
        <span className="muted" data-testid="user-email">
          {email}
        </span>
        <form action={signOutAction}>
          <button type="submit" className="button">
            Sign out
          </button>
        </form>
      </div>
    </header>
  );
}
