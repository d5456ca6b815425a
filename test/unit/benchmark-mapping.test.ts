import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { backboneOf, UNMAPPED } from '../../src/scoring/backbone';
import mapping from '../../src/scoring/category_to_backbone.json';
import { repoRoot } from '../../src/paths';
import { corpusOpt, publishedTask } from '../helpers/published';



test('acceptance 5: every category of the published task_aoiwqoiq DAG maps to a backbone', corpusOpt('task_aoiwqoiq'), () => {
  const UPSTREAM_DAG = join(publishedTask('task_aoiwqoiq'), 'check', 'task_aoiwqoiq_e', 'evaluate', 'dag.json');
  assert.ok(existsSync(UPSTREAM_DAG));
  const dag = JSON.parse(readFileSync(UPSTREAM_DAG, 'utf8')) as { nodes: { scoring: { category: string } }[] };
  const categories = [...new Set(dag.nodes.map((n) => n.scoring.category))].sort();
  assert.ok(categories.length >= 15, `${categories.length} categories`);
  const unmapped = categories.filter((c) => backboneOf(c) === UNMAPPED);
  assert.deepEqual(unmapped, []);
  const got = Object.fromEntries(categories.map((c) => [c, backboneOf(c)]));
  assert.deepEqual(got, {
    AdminPanel: 'Quality',
    ArchitectureQuality: 'Quality',
    Authentication: 'AuthZ',
    BadgeSystem: 'Logic',
    CategoryTagSystem: 'Logic',
    DataModel: 'Data',
    Deployment: 'Deploy',
    EdgeCases: 'Quality',
    Frontend: 'Quality',
    ModerationReview: 'Logic',
    NotificationRealtime: 'API',
    PrivateMessaging: 'API',
    RBAC: 'AuthZ',
    Search: 'API',
    TopicPostCRUD: 'API',
    TrustLevel: 'Logic',
    UserManagement: 'AuthZ',
  });
});

test('the paper\'s source-category lists map as published, overlaps settled by order', () => {
  const expect: Record<string, string[]> = {
    Deploy: ['Deployment', 'Setup', 'Build', 'Configuration', 'Maintenance', 'Teardown', 'TestFixture', 'BackgroundJobs', 'CLI'],
    Data: ['DataModel', 'DataModelIntegrity', 'Datasource', 'DatabaseDiscovery', 'Metadata', 'Cache', 'CacheInvalidation', 'FileSystem', 'MediaManagement', 'Upload', 'ImportExport', 'IngestionCLI', 'EventProcessing', 'RLS', 'Lineage'],
    API: ['API', 'API_GraphQL', 'API_FHIR', 'API_v2_EE', 'CRUD', 'TaskCRUD', 'TopicPostCRUD', 'GraphQLSubscriptions', 'tRPC', 'WebSocket', 'Webhook', 'WebhookDelivery', 'Realtime', 'NotificationRealtime', 'Search', 'SearchFacets', 'ActionPipeline', 'ChatSystem', 'TransactionalEmail', 'Validation'],
    Logic: ['BusinessLogic', 'BusinessLogic_Orders', 'Workflow', 'CronJobs', 'AsyncTasks', 'Order', 'Cart', 'Subscription', 'Payment', 'Tax', 'Inventory', 'InvoiceLifecycle', 'ChargeModels', 'BadgeSystem', 'QuestSystem', 'PetMount', 'Recording', 'BreakoutRooms', 'Whiteboard', 'ConferenceFlow', 'ModerationReview', 'TrustLevel', 'TemplateManagement', 'Plugin', 'HookSystem', 'Sharing'],
    AuthZ: ['Authentication', 'Authorization', 'AuthorizationPolicies', 'RBAC', 'AccessControl', 'Permission', 'AuditLog', 'AuditCompliance', 'PasswordPolicy', 'BruteForceDetection', 'APIKey', 'Security', 'SecurityHeaders', 'OAuth', 'OAuth2Flows', 'OIDCProtocol', 'SAMLProtocol', 'TokenExchange', 'IdentityProvider', 'KeyManagement', 'ProtocolMappers', 'UserManagement', 'BusinessLogic_2FA', 'BusinessLogic_Identity'],
    Quality: ['ArchitectureQuality', 'Architecture', 'Frontend', 'FrontendForms', 'UI', 'UILayout', 'EdgeCases', 'ErrorHandling', 'AdminPanel', 'AdminUI', 'Internationalization', 'Localization', 'ConfigAndAdmin'],
  };
  for (const [backbone, cats] of Object.entries(expect)) {
    for (const c of cats) assert.equal(backboneOf(c), backbone, c);
  }
  assert.equal(backboneOf('SomethingNew'), UNMAPPED);
});

test('the mapping file: an exact-match dictionary plus prefix rules, every target a backbone', () => {
  const backbones = new Set(mapping.backbones);
  for (const [k, v] of Object.entries(mapping.exact)) assert.ok(backbones.has(v), `${k} → ${v}`);
  for (const r of mapping.rules) assert.ok(backbones.has(r.backbone));
  // exact names beat the rules (APIKey is AuthZ although API* is API; BusinessLogic_2FA is AuthZ although BusinessLogic* is Logic)
  assert.equal((mapping.exact as Record<string, string>).APIKey, 'AuthZ');
  assert.equal((mapping.exact as Record<string, string>).BusinessLogic_2FA, 'AuthZ');
});
