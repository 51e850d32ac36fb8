"""Random Agent App packages for comparing `hearth app` with the format's reference CLI.

    python3 bench/agentapp/generate.py OUT_DIR SEED COUNT

Each package (OUT_DIR/NNN/<name>/) has random front matter and layered files using every
construct the reference CLI's YAML reader treats in its own way (see docs/agent-apps.md,
"Reference compatibility"), non-ASCII text, numbers past a double, CRLF and BOM files,
skills folders with and without SKILL.md, storage folders. bench/agentapp/compare.sh runs both
tools on them.
"""
import random, os, sys, shutil
random.seed(int(sys.argv[2]))
out = sys.argv[1]
shutil.rmtree(out, ignore_errors=True); os.makedirs(out)
TOP = ['name','description','version','status','appType','manifestVersion','runtimeTargets','requires','capabilities',
       'entries','services','storage','skillRefs','toolRefs','artifactTypes','evals','secrets','permissions','workflows',
       'knowledgeTemplates','overlayTemplates','events','install','agentRuntime','integrations','operations','requirements',
       'boundary','triggers','quickstart','publisher','support','compliance','presentation','runtimePackage','lifecycle','ui',
       'displayName','shortDescription','license','homepage','documentation','repository','updatedAt','metadata','compatibility','ok','skills']
ITEMK = ['key','kind','title','route','panel','command','workflow','persona','path','required','id','name','protocol',
         'executionPlane','language','endpoint','binary','requiredCapabilities','schema','migrations','placement','isolation',
         'localDefault','modes','sideEffect','evidenceRequired','approvalRequired','provider','hostCapability','cloudCapability']
VALS = ['x','é','日本語','😀 emoji','-1','1.50','0.000001','1e21','123456789012345678901234567890','9'*400,'-0','true','"false"',
        'null','~','[a, , b]','[1, 2.5, -3]','""',"''",'"a:b"','a: b','page','command','workflow','expert-chat','home','scene','bogus',
        'app-backend','client-local','cloud-remote','remote-http','stdio-jsonrpc','local-http','wasm','server-postgresql','local-sqlite',
        'standalone','runtime_backed','in_lime','web_host','lime.agent','lime.storage','external_publish','bulk_update','none',
        'skills/s1','skills/missing','../escape','/etc/passwd','storage/schema.json','./storage/migrations','0.10.0','0.3.0','0.5',
        '0.7.0','key with spaces','\ttabbed','trailing   ','# not comment','x # comment','[x]','{}','[]']
def v(): return random.choice(VALS)
def obj(indent, depth, keys):
    lines = []
    for _ in range(random.randint(1, 4)):
        k = random.choice(keys)
        r = random.random()
        if depth < 3 and r < 0.3:
            lines.append(' ' * indent + k + ':')
            lines += obj(indent + 2, depth + 1, ITEMK)
        elif depth < 3 and r < 0.55:
            lines.append(' ' * indent + k + ':')
            lines += lst(indent + random.choice([0, 2, 2, 2]), depth + 1)
        else:
            lines.append(' ' * indent + k + ': ' + v())
    return lines
def lst(indent, depth):
    lines = []
    for _ in range(random.randint(0, 3)):
        r = random.random()
        if r < 0.3:
            lines.append(' ' * indent + '- ' + v())
        else:
            lines.append(' ' * indent + '- ' + random.choice(ITEMK) + ': ' + v())
            for _ in range(random.randint(0, 3)):
                k = random.choice(ITEMK)
                if random.random() < 0.15 and depth < 3:
                    lines.append(' ' * (indent + 2) + k + ':')
                    lines += lst(indent + 4, depth + 1)
                else:
                    lines.append(' ' * (indent + 2) + k + ': ' + v())
    return lines
for i in range(int(sys.argv[3])):
    name = random.choice(['pkg', 'demo', f'p{i}'])
    d = os.path.join(out, f'{i:03d}', name)
    os.makedirs(d)
    fm = ['name: ' + (name if random.random() < 0.8 else v()),
          'description: ' + v(), 'version: ' + random.choice(['1.0.0', '2', '0', '"1"']),
          'status: ' + random.choice(['ready', 'draft', 'bogus']),
          'appType: ' + random.choice(['agent-app', 'custom', 'domain-app']),
          'manifestVersion: ' + random.choice(['0.10.0', '0.9.0', '0.8.0', '0.6.0', '0.5.0', '0.3.0', '0.10'])]
    random.shuffle(fm)
    fm = fm[:random.randint(2, 6)] + obj(0, 0, TOP)
    body = '---\n' + '\n'.join(fm) + '\n---\n# body\n'
    r = random.random()
    if r < 0.05: body = body.replace('\n', '\r\n')
    elif r < 0.08: body = '\ufeff' + body
    elif r < 0.1: body = '# no front matter\n'
    with open(os.path.join(d, 'APP.md'), 'w', encoding='utf-8') as f: f.write(body)
    for lf, top in [('app.runtime.yaml', 'agentRuntime'), ('app.install.yaml', 'install'), ('app.integrations.yaml', 'integrations'),
                    ('app.operations.yaml', 'operations'), ('app.requirements.yaml', 'requirements'), ('app.boundary.yaml', 'boundaries')]:
        if random.random() < 0.35:
            lines = [top + ':'] + (lst(2, 1) if top in ('integrations', 'operations', 'requirements', 'boundaries') else obj(2, 1, ITEMK + ['bridge', 'modes', 'runtime', 'standalone', 'branding', 'methods', 'events', 'agentTask']))
            with open(os.path.join(d, lf), 'w') as f: f.write('\n'.join(lines) + '\n')
    if random.random() < 0.4:
        os.makedirs(os.path.join(d, 'skills', 's1'))
        if random.random() < 0.5: open(os.path.join(d, 'skills', 's1', 'SKILL.md'), 'w').write('x')
        if random.random() < 0.3: os.makedirs(os.path.join(d, 'skills', 'b2'))
    if random.random() < 0.3:
        os.makedirs(os.path.join(d, 'storage', 'migrations'), exist_ok=True); open(os.path.join(d, 'storage', 'schema.json'), 'w').write('{}')
    if random.random() < 0.2:
        os.makedirs(os.path.join(d, 'locales'), exist_ok=True)
    if random.random() < 0.1:
        os.makedirs(os.path.join(d, 'node_modules', 'x'), exist_ok=True); open(os.path.join(d, 'node_modules', 'x', 'i.js'), 'w').write('x')
