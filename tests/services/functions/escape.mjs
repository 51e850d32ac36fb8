import secret from '../../../../etc/hostname';
export const f = () => secret;
