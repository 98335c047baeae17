import { signOutAction } from "../app/auth-actions.ts";

export function DashboardHeader({
  email,
  orgName,
  role,
}: {
  email: string;
  orgName: string | null;
  role: string | null;
}) {
  return (
    <header className="topbar">
      <div className="topbar-left">
        <span className="brand">Thaw</span>
        {orgName && (
          <span className="org" data-testid="org-name">
            {orgName}
            {role && <span className="badge">{role}</span>}
          </span>
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
