import { useMemo, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { ArrowDown, ArrowUp, Pencil, Plus, Trash2 } from 'lucide-react';
import { ApiError } from '../api/client';
import { useApi } from '../api/context';
import type { Rule, Settings, Warning } from '../api/types';
import { useAppData } from '../hooks/useAppData';
import {
  buildRules, draftOfRule, draftOfTemplate, editorField, emptyDraft, ruleIndexOf, targetChoices, TEMPLATES, whenText,
  type RuleDraft, type RuleErrors, type TemplateId,
} from '../rules';
import { RuleForm } from './RuleForm';

const NO_RULES: Rule[] = [];

/**
 * The routing rules, in order (first match wins): move, add (empty or from a template), edit, delete, then Save
 * puts the whole list (PUT /api/settings `rules`). Errors and warnings of the answer land on the rule and field
 * they name.
 */
export function RulesEditor() {
  const { t } = useTranslation();
  const api = useApi();
  const { settings, endpoints, setSettings } = useAppData();
  const saved = settings?.rules ?? NO_RULES;
  const [drafts, setDrafts] = useState<RuleDraft[]>(() => saved.map(draftOfRule));
  const [dirty, setDirty] = useState(false);
  const [open, setOpen] = useState<number | null>(null);
  const [errors, setErrors] = useState<RuleErrors>({});
  const [warnings, setWarnings] = useState<Warning[]>([]);
  const [general, setGeneral] = useState('');
  const [notice, setNotice] = useState('');
  const [busy, setBusy] = useState(false);
  const choices = useMemo(() => targetChoices(endpoints), [endpoints]);

  // The saved rules (loaded, saved here, or changed in another window) replace the list unless it has edits.
  const [draftsOf, setDraftsOf] = useState(saved);
  if (draftsOf !== saved && !dirty) {
    setDraftsOf(saved);
    setDrafts(saved.map(draftOfRule));
  }

  const edit = (next: RuleDraft[]) => {
    setDrafts(next);
    setDirty(true);
    setNotice('');
  };
  // Errors and warnings name rules by position; once rules move they would point at the wrong one.
  const reorder = (next: RuleDraft[]) => {
    edit(next);
    setErrors({});
    setWarnings([]);
  };
  const move = (i: number, by: -1 | 1) => {
    const next = [...drafts];
    [next[i], next[i + by]] = [next[i + by], next[i]];
    reorder(next);
  };
  const add = (d: RuleDraft) => {
    edit([...drafts, d]);
    setOpen(d.key);
  };
  const update = (key: number, patch: Partial<RuleDraft>) => edit(drafts.map((d) => (d.key === key ? { ...d, ...patch } : d)));

  const discard = () => {
    setDrafts(saved.map(draftOfRule));
    setDirty(false);
    setErrors({});
    setGeneral('');
    setOpen(null);
  };

  // The first rule with an error is opened, so the error shows at its field.
  const showErrors = (errs: RuleErrors) => {
    setErrors(errs);
    const i = Math.min(...Object.keys(errs).map(ruleIndexOf).filter((n) => n >= 0));
    if (Number.isFinite(i) && drafts[i]) setOpen(drafts[i].key);
  };

  const save = async () => {
    setGeneral('');
    setNotice('');
    const { rules, errors: local } = buildRules(drafts, t);
    if (!rules) return showErrors(local);
    setErrors({});
    setBusy(true);
    try {
      // The warnings are this answer's, not part of the settings kept for the window.
      const reply: Settings & { warnings?: Warning[] } = await api.updateSettings({ rules });
      setWarnings(reply.warnings ?? []);
      delete reply.warnings;
      setDirty(false);
      setOpen(null);
      setSettings(reply);
      setNotice(t('rules.saved'));
    } catch (err) {
      if (err instanceof ApiError && ruleIndexOf(err.field) >= 0) showErrors({ [editorField(err.field)]: err.message });
      else setGeneral(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  };

  const warningsOf = (i: number) => warnings.filter((w) => ruleIndexOf(w.field) === i);
  const hasError = (i: number) => Object.keys(errors).some((k) => ruleIndexOf(k) === i);

  return (
    <section className="rules" aria-labelledby="rules-heading" data-testid="rules-editor">
      <h3 id="rules-heading">{t('rules.heading')}</h3>
      <p className="muted">{t('rules.intro')}</p>
      {general && <p className="error" role="alert">{general}</p>}
      {drafts.length === 0 ? (
        <p className="empty" data-testid="rules-empty">{t('rules.empty')}</p>
      ) : (
        <ol className="rules-list" data-testid="rules-list">
          {drafts.map((d, i) => {
            const label = d.name.trim() || t('rules.unnamed');
            return (
              <li key={d.key} className={`rule-row${hasError(i) ? ' field-error' : ''}`} data-testid={`rule-${i}`}>
                <div className="rule-head">
                  <span className="pos" aria-hidden="true">{i + 1}</span>
                  <strong data-testid="rule-name">{label}</strong>
                  <span className="muted" data-testid="rule-when">{whenText(t, d)}</span>
                  <span aria-hidden="true">→</span>
                  <span className="mono" data-testid="rule-then">{d.endpoints.join(', ') || '—'}</span>
                  {d.fallback && <span className="tag">{t('rules.fallbackTag')}</span>}
                  <span className="rule-actions" role="group" aria-label={t('rules.actions', { name: label })}>
                    <button type="button" disabled={i === 0} aria-label={t('rules.moveUp', { name: label })} onClick={() => move(i, -1)}><ArrowUp /></button>
                    <button type="button" disabled={i === drafts.length - 1} aria-label={t('rules.moveDown', { name: label })} onClick={() => move(i, 1)}><ArrowDown /></button>
                    <button type="button" aria-expanded={open === d.key} onClick={() => setOpen(open === d.key ? null : d.key)}>
                      <Pencil />{open === d.key ? t('rules.close') : t('rules.edit')}
                    </button>
                    <button type="button" className="danger" aria-label={t('rules.delete', { name: label })} onClick={() => reorder(drafts.filter((x) => x.key !== d.key))}>
                      <Trash2 />
                    </button>
                  </span>
                </div>
                {warningsOf(i).map((w) => (
                  <p key={w.field + w.code} className="warn" role="status" data-testid="rule-warning">
                    {t(`rules.warnings.${w.code}`, { defaultValue: w.message })}
                  </p>
                ))}
                {open === d.key && <RuleForm draft={d} index={i} errors={errors} choices={choices} onChange={(p) => update(d.key, p)} />}
              </li>
            );
          })}
        </ol>
      )}
      <div className="actions">
        <button type="button" onClick={() => add(emptyDraft())}><Plus />{t('rules.add')}</button>
        <button type="button" className="primary" disabled={!dirty || busy} onClick={() => void save()}>{t('rules.save')}</button>
        <button type="button" disabled={!dirty || busy} onClick={discard}>{t('rules.discard')}</button>
        {dirty && <span className="muted" data-testid="rules-dirty">{t('rules.unsaved')}</span>}
        {notice && <span className="notice" role="status">{notice}</span>}
      </div>
      <h4>{t('rules.templatesHeading')}</h4>
      <ul className="plain templates" data-testid="rule-templates">
        {TEMPLATES.map((id: TemplateId) => (
          <li key={id}>
            <button type="button" onClick={() => add(draftOfTemplate(id, drafts.map((x) => x.name)))}>{t(`rules.templates.${id}.title`)}</button>{' '}
            <span className="muted">{t(`rules.templates.${id}.help`)}</span>
          </li>
        ))}
      </ul>
    </section>
  );
}
