import { useEffect, useId, useRef } from 'react';

interface Props {
  message: string;
  confirmLabel: string;
  cancelLabel: string;
  onConfirm: () => void;
  onCancel: () => void;
}

/** A small modal confirmation; focus starts on Cancel so Enter is safe. */
export function ConfirmDialog({ message, confirmLabel, cancelLabel, onConfirm, onCancel }: Props) {
  const id = useId();
  const cancelRef = useRef<HTMLButtonElement>(null);
  useEffect(() => cancelRef.current?.focus(), []);
  return (
    <div className="modal-backdrop" onKeyDown={(e) => e.key === 'Escape' && onCancel()}>
      <div className="modal" role="alertdialog" aria-modal="true" aria-labelledby={id}>
        <p id={id}>{message}</p>
        <div className="actions">
          <button type="button" className="danger" onClick={onConfirm}>{confirmLabel}</button>
          <button type="button" ref={cancelRef} onClick={onCancel}>{cancelLabel}</button>
        </div>
      </div>
    </div>
  );
}
