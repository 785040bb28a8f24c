/** The dashboard: a shell (navigation, connection banner) around one page per URL. */
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { ExecutorBanner } from './components/executor-banner.js';
import { Link } from './components/link.js';
import { onConnection, startLive, type Connection } from './live.js';
import { decodeSegment, malformedSegment, match, partitionPath, useLocation } from './router.js';
import { BackfillPage, BackfillsPage } from './pages/backfills-page.js';
import { GraphPage } from './pages/graph-page.js';
import { JobRunPage } from './pages/job-run-page.js';
import { JobRunsPage } from './pages/job-runs-page.js';
import { PartitionPage } from './pages/partition-page.js';
import { PartitionsPage } from './pages/partitions-page.js';
import { SchedulesPage } from './pages/schedules-page.js';
import { TaintPage, TaintsPage } from './pages/taints-page.js';
import { WantPage } from './pages/want-page.js';
import { WantsPage } from './pages/wants-page.js';

const NAV: Array<[string, string]> = [
  ['/wants', 'Wants'],
  ['/partitions', 'Partitions'],
  ['/job_runs', 'Job runs'],
  ['/backfills', 'Backfills'],
  ['/taints', 'Taints'],
  ['/schedules', 'Schedules'],
  ['/graph', 'Graph'],
];

function Banner() {
  const [c, setC] = useState<Connection>('connecting');
  useEffect(() => onConnection(setC), []);
  if (c === 'live') return null;
  return (
    <div class={`banner banner-${c}`} role="status" data-connection={c}>
      {c === 'lost'
        ? 'Connection to the daemon lost: reconnecting… (pages show what they last read)'
        : c === 'gone'
          ? 'The daemon has not answered at this address for a while; still trying. A daemon the CLI started again listens on a new port: run platform ui for a link to it. (Pages show what they last read.)'
          : c === 'refused'
            ? "The daemon at this address no longer accepts this page's sign-in (it was started again, with a new token): run platform ui for a new link. (Pages show what they last read.)"
            : 'Connecting to the daemon…'}
    </div>
  );
}

function Page() {
  const location = useLocation();
  const path = location.path.replace(/\/+$/, '') || '/wants';
  let m: Record<string, string> | undefined;
  useEffect(() => {
    document.title = `platform · ${path.split('/').filter(Boolean).map((s) => decodeSegment(s) ?? s).join(' · ')}`;
  }, [path]);
  if (path === '/' || path === '/wants') return <WantsPage location={location} />;
  if ((m = match('/wants/:id', path))) return <WantPage id={m.id!} />;
  if (path === '/partitions') return <PartitionsPage location={location} />;
  if ((m = match('/partitions/:ref', path))) return <PartitionPage refName={m.ref!} />;
  // A ref typed into the address as it reads (`/partitions/raw/orders/date=2026-01-05`), its slashes not encoded.
  if (path.startsWith('/partitions/') && (m = partitionPath(path))) return <PartitionPage refName={m.ref!} />;
  if (path === '/job_runs') return <JobRunsPage location={location} />;
  if ((m = match('/job_runs/:id', path))) return <JobRunPage id={m.id!} />;
  if (path === '/backfills') return <BackfillsPage />;
  if ((m = match('/backfills/:id', path))) return <BackfillPage id={m.id!} />;
  if (path === '/taints') return <TaintsPage />;
  if ((m = match('/taints/:id', path))) return <TaintPage id={m.id!} location={location} />;
  if (path === '/schedules') return <SchedulesPage location={location} />;
  if (path === '/graph') return <GraphPage location={location} />;
  const malformed = malformedSegment(path);
  if (malformed !== undefined) {
    return (
      <section>
        <h1>Not a valid address</h1>
        <p>
          <code>{malformed}</code> in <code>{location.path}</code> is not percent-encoded UTF-8, so it names no want, run
          or partition: the link was cut or mistyped. Copy it again from the page it came from, or{' '}
          <Link href="/wants">go to the wants</Link>.
        </p>
      </section>
    );
  }
  return (
    <section>
      <h1>Not found</h1>
      <p>
        No page at <code>{location.path}</code>. <Link href="/wants">Go to the wants.</Link>
      </p>
    </section>
  );
}

function App() {
  const location = useLocation();
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header>
        <span class="brand">platform</span>
        <nav aria-label="Pages">
          {NAV.map(([href, label]) => (
            <Link href={href} class={location.path === href || location.path.startsWith(`${href}/`) ? 'active' : ''}>
              {label}
            </Link>
          ))}
        </nav>
      </header>
      <Banner />
      <ExecutorBanner />
      <main id="main">
        <Page />
      </main>
    </>
  );
}

startLive();
render(<App />, document.getElementById('app')!);
